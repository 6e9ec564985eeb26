//! Keeps the memory map of each process the profile meets, from a thread
//! of its own: the event loop may spend seconds naming a drain's stacks on
//! a busy machine (a large library read for the first time, the CPU given
//! to others), and a process that starts and ends meanwhile must still have
//! its mappings kept while it lives, or its frames stay `[unknown]`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use runtime::SessionReader;
use runtime::symbols::ExitMaps;

/// How often the thread looks for new processes.
const LOOK_EVERY: Duration = Duration::from_millis(20);

/// The thread; it stops when dropped.
pub struct Keeper {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Keeper {
    /// Reads `pids_map` (kernel name; `pid → when met`) through `reader`
    /// and keeps the mappings of every process new to it (or met again
    /// after `exec`) in `kept`.
    pub fn start(reader: SessionReader, pids_map: String, kept: ExitMaps) -> Keeper {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("weft-keeper".into())
            .spawn(move || {
                let mut known: HashMap<u32, u64> = HashMap::new();
                while !stopped.load(Ordering::Relaxed) {
                    for (pid, met) in met_processes(&reader, &pids_map) {
                        if known.insert(pid, met) != Some(met) {
                            kept.record_now(pid);
                        }
                    }
                    std::thread::sleep(LOOK_EVERY);
                }
            })
            .ok();
        Keeper { stop, thread }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `(pid, when met)` of every process in the map; none if it cannot be read.
fn met_processes(reader: &SessionReader, pids_map: &str) -> Vec<(u32, u64)> {
    let word = |b: &[u8]| {
        b.get(..8)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    };
    let Ok(entries) = reader.map_entries_merged(
        pids_map,
        |size| size,
        |per_cpu, out| {
            if let Some(first) = per_cpu.iter().next() {
                let n = first.len().min(out.len());
                out[..n].copy_from_slice(&first[..n]);
            }
            true
        },
    ) else {
        return Vec::new();
    };
    let (ks, vs) = (entries.key_size(), entries.value_size());
    (0..entries.len())
        .map(|i| {
            let key = &entries.keys()[i * ks..(i + 1) * ks];
            let value = &entries.values()[i * vs..(i + 1) * vs];
            (word(key) as u32, word(value))
        })
        .filter(|&(pid, _)| pid != 0)
        .collect()
}
