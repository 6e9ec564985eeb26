//! User-space addresses: each process's executable mappings are read from
//! `/proc/PID/maps` the first time weft meets the process (and again when
//! an address falls outside them), and an address is symbolized with
//! blazesym as a file offset in the mapped file, with its debug file
//! (`.gnu_debuglink`, `/usr/lib/debug/.build-id`) when one is installed.
//! Because only the kept mappings are needed, a process that has exited
//! still resolves, and a library mapped by many processes is parsed once.
//! The vDSO resolves through weft's own (the kernel maps the same image in
//! every process); anonymous executable memory through the JIT runtime's
//! `/tmp/perf-PID.map`. Results are cached per `(pid, address)`; an address
//! that cannot be resolved stays `None` (printed in hex, `[unknown]` in
//! profiles).
//!
//! The memory map of a traced command is also taken as it exits
//! ([`ExitMaps`], shared with the thread that holds it there): taking it
//! costs a fraction of a millisecond, symbolizing tens, so the command is
//! held only for the former, and its addresses resolve from that map.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use blazesym::Pid;
use blazesym::symbolize::source::{Elf, Process, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};

use uelf::{Backing, ProcessMaps};

use super::ResolvedSymbol;
use super::perf_map::PerfMap;

/// The memory maps (`/proc/PID/maps` text) of processes taken as they
/// exited, shared with whoever watches them exit. A process found here is
/// symbolized from this map and the files on disk.
#[derive(Clone, Debug, Default)]
pub struct ExitMaps(Arc<Mutex<HashMap<u32, String>>>);

impl ExitMaps {
    /// Keeps the memory map of `pid`, which is about to exit.
    pub fn record(&self, pid: u32, maps: String) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pid, maps);
    }

    /// Reads `/proc/PID/maps` and keeps it; false if it cannot be read.
    pub fn record_now(&self, pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/maps")) {
            Ok(maps) if !maps.is_empty() => {
                self.record(pid, maps);
                true
            }
            _ => false,
        }
    }

    /// The executable mappings of `pid` as kept at its exit.
    fn get(&self, pid: u32) -> Option<ProcessMaps> {
        let maps = self.0.lock().unwrap_or_else(|e| e.into_inner());
        maps.get(&pid).map(|text| ProcessMaps::parse(text, "", pid))
    }
}

/// Reads the mappings of live process `pid`; `None` if it is gone. Files
/// of a process in another mount namespace are read through its root.
pub fn read_process_maps(pid: u32) -> Option<ProcessMaps> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    // An exiting process has no memory left to list: it is as good as gone.
    if text.is_empty() {
        return None;
    }
    let ns = |p: &str| std::fs::read_link(p).ok();
    let own = ns("/proc/self/ns/mnt");
    let theirs = ns(&format!("/proc/{pid}/ns/mnt"));
    let root = if own.is_some() && theirs.is_some() && own != theirs {
        format!("/proc/{pid}/root")
    } else {
        String::new()
    };
    let mut maps = ProcessMaps::parse(&text, &root, pid);
    if !root.is_empty() {
        // A file that is the same one at its own path is named by that path,
        // which stays readable after the process (and its root) is gone.
        use std::os::unix::fs::MetadataExt;
        let same = |a: &str, b: &str| match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        for m in &mut maps.mappings {
            if let Backing::File(path) = &m.backing
                && let Some(own) = path.strip_prefix(root.as_str())
                && same(path, own)
            {
                m.backing = Backing::File(own.to_string());
            }
        }
    }
    Some(maps)
}

/// What weft keeps of one process.
#[derive(Default)]
struct Known {
    maps: ProcessMaps,
    /// Its perf map and the file's length when read (re-read when it grows).
    perf_map: Option<(PerfMap, u64)>,
    /// The maps were read again for an address outside them since they
    /// were last taken: an address outside them now (a frame-pointer walk's
    /// garbage) is not worth another read.
    reread: bool,
    /// The memory map kept at the process's exit replaced them.
    from_exit: bool,
}

/// The user-space symbolizer with its per-process mappings and cache.
pub struct UserSymbols {
    symbolizer: Symbolizer,
    cache: HashMap<(u32, u64), Option<ResolvedSymbol>>,
    processes: HashMap<u32, Known>,
    /// Where weft's own vDSO starts, once looked up.
    own_vdso: Option<Option<u64>>,
    /// CPU time spent reading mappings and symbolizing.
    spent: Duration,
    /// The GNU build id of each file read for `build_id` stacks.
    build_ids: HashMap<String, Option<Vec<u8>>>,
    exit_maps: ExitMaps,
}

impl std::fmt::Debug for UserSymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserSymbols")
            .field("cached", &self.cache.len())
            .field("processes", &self.processes.len())
            .finish()
    }
}

impl Default for UserSymbols {
    fn default() -> Self {
        UserSymbols::new()
    }
}

/// Where one address is looked up.
enum Target {
    /// A file: read at `path`, named `shown` (the process's path for it).
    File {
        path: String,
        shown: String,
        offset: u64,
    },
    Vdso {
        offset: u64,
    },
    Anonymous,
    Unmapped,
}

impl UserSymbols {
    pub fn new() -> UserSymbols {
        UserSymbols::with_exit_maps(ExitMaps::default())
    }

    /// A symbolizer that resolves the processes of `exit_maps` from their
    /// memory maps kept at exit.
    pub fn with_exit_maps(exit_maps: ExitMaps) -> UserSymbols {
        UserSymbols {
            symbolizer: Symbolizer::builder()
                .enable_code_info(false)
                .enable_inlined_fns(false)
                .build(),
            cache: HashMap::new(),
            processes: HashMap::new(),
            own_vdso: None,
            spent: Duration::ZERO,
            build_ids: HashMap::new(),
            exit_maps,
        }
    }

    /// Time spent reading mappings and symbolizing so far.
    pub fn time_spent(&self) -> Duration {
        self.spent
    }

    /// Keeps `pid`'s mappings if they are not kept yet (cheap: one read of
    /// `/proc/PID/maps`), so its addresses resolve after it exits. False if
    /// the process is gone and nothing was kept.
    pub fn remember_process(&mut self, pid: u32) -> bool {
        if let Some(known) = self.processes.get(&pid) {
            return !known.maps.mappings.is_empty();
        }
        let started = super::thread_cpu_time();
        let found = read_process_maps(pid);
        self.spent += super::thread_cpu_time().saturating_sub(started);
        match found {
            Some(maps) => {
                self.processes.insert(
                    pid,
                    Known {
                        maps,
                        ..Known::default()
                    },
                );
                true
            }
            None => false,
        }
    }

    /// Reads `pid`'s mappings again (it ran `exec`: a new program), if it
    /// still lives; what was resolved with the old ones is forgotten.
    pub fn refresh_process(&mut self, pid: u32) -> bool {
        let started = super::thread_cpu_time();
        let found = read_process_maps(pid);
        self.spent += super::thread_cpu_time().saturating_sub(started);
        let Some(maps) = found else {
            return self.processes.contains_key(&pid);
        };
        let known = self.processes.entry(pid).or_default();
        known.reread = false;
        if known.maps != maps {
            known.maps = maps;
            self.cache.retain(|(p, _), _| *p != pid);
        }
        true
    }

    /// Resolves a stack's frames of process `pid` (the first is the exact
    /// instruction pointer, the others return addresses looked up at `addr - 1`).
    pub fn frames(&mut self, pid: u32, addrs: &[u64]) -> Vec<Option<ResolvedSymbol>> {
        let probes: Vec<u64> = addrs
            .iter()
            .enumerate()
            .map(|(i, &a)| if i == 0 { a } else { a.saturating_sub(1) })
            .collect();
        let syms = self.lookup(pid, &probes);
        syms.into_iter()
            .zip(addrs.iter().zip(&probes))
            .map(|(sym, (&addr, &probe))| {
                sym.map(|mut s| {
                    s.offset = addr - (probe - s.offset);
                    s
                })
            })
            .collect()
    }

    /// Symbolizes offsets of the file at `path` (shown as `shown`), as a
    /// stack unwound in user space found them while the process lived: no
    /// process mappings are needed, so `exec` and exit do not matter.
    /// `return_address` offsets are looked up one byte back (at the call).
    pub fn file_frames(
        &mut self,
        path: &str,
        shown: &str,
        offsets: &[(u64, bool)],
    ) -> Vec<Option<ResolvedSymbol>> {
        let started = super::thread_cpu_time();
        let probes: Vec<u64> = offsets
            .iter()
            .map(|&(o, ret)| if ret { o.saturating_sub(1) } else { o })
            .collect();
        let found = self
            .symbolize_file_twice(path, &probes)
            .unwrap_or_else(|| vec![None; probes.len()]);
        self.spent += super::thread_cpu_time().saturating_sub(started);
        found
            .into_iter()
            .zip(offsets.iter().zip(&probes))
            .map(|(sym, (&(offset, _), &probe))| {
                sym.map(|(name, into)| ResolvedSymbol {
                    name,
                    offset: offset - (probe - into),
                    module: Some(shown.to_string()),
                })
            })
            .collect()
    }

    /// Where each address of process `pid` lies, as the kernel's
    /// `BPF_F_STACK_BUILD_ID` stacks give it: the GNU build id of the file
    /// mapped there and the address's offset in that file; `None` for
    /// anonymous memory, the vDSO, an unmapped address or a file without a
    /// build id.
    pub fn build_ids(&mut self, pid: u32, addrs: &[u64]) -> Vec<Option<(Vec<u8>, u64)>> {
        let started = super::thread_cpu_time();
        let targets = self.targets(pid, addrs);
        let out = targets
            .into_iter()
            .map(|t| match t {
                Target::File { path, offset, .. } => {
                    let id = self
                        .build_ids
                        .entry(path)
                        .or_insert_with_key(|path| {
                            let data = std::fs::read(path).ok()?;
                            uelf::Binary::parse(&data).ok()?.build_id
                        })
                        .clone()?;
                    Some((id, offset))
                }
                _ => None,
            })
            .collect();
        self.spent += super::thread_cpu_time().saturating_sub(started);
        out
    }

    /// Resolves exact addresses of process `pid`.
    pub fn lookup(&mut self, pid: u32, addrs: &[u64]) -> Vec<Option<ResolvedSymbol>> {
        let mut missing: Vec<u64> = addrs
            .iter()
            .copied()
            .filter(|a| !self.cache.contains_key(&(pid, *a)))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        if !missing.is_empty() {
            let started = super::thread_cpu_time();
            let found = self.symbolize(pid, &missing);
            self.spent += super::thread_cpu_time().saturating_sub(started);
            for (addr, sym) in missing.iter().zip(found) {
                self.cache.insert((pid, *addr), sym);
            }
        }
        addrs
            .iter()
            .map(|a| self.cache.get(&(pid, *a)).cloned().flatten())
            .collect()
    }

    fn targets(&mut self, pid: u32, addrs: &[u64]) -> Vec<Target> {
        self.use_exit_map(pid);
        self.remember_process(pid);
        let uncovered = |known: &Known| addrs.iter().any(|&a| known.maps.find(a).is_none());
        if self
            .processes
            .get(&pid)
            .is_none_or(|k| uncovered(k) && !k.reread && !k.from_exit)
        {
            // Mapped since (dlopen), if the process still lives.
            let fresh = read_process_maps(pid);
            let known = self.processes.entry(pid).or_default();
            known.reread = true;
            if let Some(maps) = fresh {
                known.maps = maps;
            }
            // It may have exited while it was read: its map kept at the
            // exit (before its memory went) is there now if at all.
            self.use_exit_map(pid);
        }
        let maps = self.processes.get(&pid).map(|k| &k.maps);
        addrs
            .iter()
            .map(|&a| match maps.and_then(|m| m.find(a)) {
                None => Target::Unmapped,
                Some(m) => match &m.backing {
                    Backing::File(path) => Target::File {
                        shown: m.path.clone().unwrap_or_else(|| path.clone()),
                        path: path.clone(),
                        offset: m.file_offset(a),
                    },
                    Backing::Vdso => Target::Vdso {
                        offset: a - m.start,
                    },
                    Backing::Anonymous => Target::Anonymous,
                },
            })
            .collect()
    }

    /// The memory map kept at `pid`'s exit, once there is one, is its last word.
    fn use_exit_map(&mut self, pid: u32) {
        if self.processes.get(&pid).is_some_and(|k| k.from_exit) {
            return;
        }
        if let Some(maps) = self.exit_maps.get(pid) {
            let known = self.processes.entry(pid).or_default();
            known.maps = maps;
            known.from_exit = true;
        }
    }

    fn symbolize(&mut self, pid: u32, addrs: &[u64]) -> Vec<Option<ResolvedSymbol>> {
        let targets = self.targets(pid, addrs);
        let mut out: Vec<Option<ResolvedSymbol>> = vec![None; addrs.len()];
        let mut by_file: HashMap<(&str, &str), Vec<(usize, u64)>> = HashMap::new();
        let mut vdso: Vec<(usize, u64)> = Vec::new();
        let mut anonymous: Vec<usize> = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            match t {
                Target::File {
                    path,
                    shown,
                    offset,
                } => by_file.entry((path, shown)).or_default().push((i, *offset)),
                Target::Vdso { offset } => vdso.push((i, *offset)),
                // Anonymous memory, or a process gone before weft met it:
                // only a perf map can name it.
                Target::Anonymous | Target::Unmapped => anonymous.push(i),
            }
        }
        for ((path, module), wanted) in by_file {
            let offsets: Vec<u64> = wanted.iter().map(|w| w.1).collect();
            let found = self.symbolize_file_twice(path, &offsets);
            if let Some(found) = found {
                for ((i, _), sym) in wanted.iter().zip(found) {
                    out[*i] = sym.map(|(name, offset)| ResolvedSymbol {
                        name,
                        offset,
                        module: Some(module.to_string()),
                    });
                }
            }
        }
        if !vdso.is_empty()
            && let Some(start) = self.own_vdso_start()
        {
            {
                let own: Vec<u64> = vdso.iter().map(|v| start + v.1).collect();
                let mut process = Process::new(Pid::Slf);
                process.perf_map = false;
                let found = self
                    .symbolizer
                    .symbolize(&Source::Process(process), Input::AbsAddr(&own));
                if let Ok(found) = found {
                    for ((i, _), sym) in vdso.iter().zip(found) {
                        if let Symbolized::Sym(s) = sym {
                            out[*i] = Some(ResolvedSymbol {
                                name: s.name.into_owned(),
                                offset: s.offset as u64,
                                module: Some("[vdso]".to_string()),
                            });
                        }
                    }
                }
            }
        }
        if !anonymous.is_empty() {
            for i in anonymous {
                out[i] = self.perf_map_lookup(pid, addrs[i]);
            }
        }
        out
    }

    /// Symbolizes file offsets of one ELF file from its own symbol tables,
    /// then what they do not name (local functions of a stripped library)
    /// from its debug file (`.gnu_debuglink`, `/usr/lib/debug/.build-id`),
    /// which costs far more to read; `None` if the file cannot be read.
    fn symbolize_file_twice(
        &self,
        path: &str,
        offsets: &[u64],
    ) -> Option<Vec<Option<(String, u64)>>> {
        let mut found = self.symbolize_file(path, offsets, false)?;
        let unnamed: Vec<usize> = (0..found.len()).filter(|&i| found[i].is_none()).collect();
        if unnamed.is_empty() {
            return Some(found);
        }
        let rest: Vec<u64> = unnamed.iter().map(|&i| offsets[i]).collect();
        // A debug file that cannot be read leaves them unnamed.
        if let Some(debug) = self.symbolize_file(path, &rest, true) {
            for (i, sym) in unnamed.into_iter().zip(debug) {
                found[i] = sym;
            }
        }
        Some(found)
    }

    /// Symbolizes file offsets of one ELF file: `(name, offset into the
    /// symbol)` each; `None` if the file cannot be read.
    fn symbolize_file(
        &self,
        path: &str,
        offsets: &[u64],
        debug_syms: bool,
    ) -> Option<Vec<Option<(String, u64)>>> {
        let mut elf = Elf::new(path);
        elf.debug_syms = debug_syms;
        let results = self
            .symbolizer
            .symbolize(&Source::Elf(elf), Input::FileOffset(offsets))
            .ok()?;
        Some(
            results
                .into_iter()
                .map(|r| match r {
                    Symbolized::Sym(sym) => Some((sym.name.into_owned(), sym.offset as u64)),
                    Symbolized::Unknown(_) => None,
                })
                .collect(),
        )
    }

    fn own_vdso_start(&mut self) -> Option<u64> {
        *self.own_vdso.get_or_insert_with(|| {
            read_process_maps(std::process::id())?
                .mappings
                .iter()
                .find(|m| m.backing == Backing::Vdso)
                .map(|m| m.start)
        })
    }

    /// `addr` in `pid`'s perf map, read (again) when it is new or has grown.
    fn perf_map_lookup(&mut self, pid: u32, addr: u64) -> Option<ResolvedSymbol> {
        let path = PerfMap::path(pid);
        let len = std::fs::metadata(&path).ok()?.len();
        let known = self.processes.entry(pid).or_default();
        if known.perf_map.as_ref().is_none_or(|(_, l)| *l != len) {
            known.perf_map = PerfMap::read(pid).map(|m| (m, len));
        }
        let (map, _) = known.perf_map.as_ref()?;
        map.lookup(addr).map(|(name, offset)| ResolvedSymbol {
            name: name.to_string(),
            offset,
            module: Some(path),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[inline(never)]
    #[unsafe(no_mangle)]
    extern "C" fn weft_symbols_test_marker() -> u64 {
        std::hint::black_box(42)
    }

    #[test]
    fn resolves_a_function_of_this_process() {
        let addr = weft_symbols_test_marker as *const () as u64;
        let mut symbols = UserSymbols::new();
        let got = symbols.lookup(std::process::id(), &[addr + 1]);
        let sym = got[0].as_ref().expect("own symbol resolves");
        assert_eq!(sym.name, "weft_symbols_test_marker");
        assert_eq!(sym.offset, 1);
        assert!(sym.module.is_some());
        // As a return address one byte past the start, it is looked up at the start.
        let frames = symbols.frames(std::process::id(), &[addr + 1, addr + 1]);
        assert_eq!(frames[1].as_ref().unwrap().offset, 1);
    }

    #[test]
    fn the_vdso_resolves_through_weft_own() {
        let mut symbols = UserSymbols::new();
        let Some(start) = symbols.own_vdso_start() else {
            return; // no vDSO on this kernel
        };
        // Somewhere in the vDSO's first page there is a function.
        let found = (0..0x1000)
            .step_by(16)
            .filter_map(|off| {
                symbols
                    .lookup(std::process::id(), &[start + off])
                    .pop()
                    .flatten()
            })
            .next();
        let sym = found.expect("a vDSO function");
        assert_eq!(sym.module.as_deref(), Some("[vdso]"));
    }

    #[test]
    fn addresses_resolve_from_the_map_kept_at_exit() {
        // A child that waits in read() until told to exit.
        let mut child = std::process::Command::new("/bin/cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("cat");
        let pid = child.id();
        // An address inside libc's `read` in the child: the same file offset
        // as ours, in its executable libc mapping (others may map the file
        // too, as blazesym does to read it).
        // SAFETY: dlsym with a NUL-terminated name returns an address or null.
        let ours = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"read".as_ptr()) } as u64;
        let own = read_process_maps(std::process::id()).unwrap();
        let text = own.find(ours).expect("our read is mapped");
        let file_offset = text.file_offset(ours) + 1;
        let libc_path = text.path.clone().unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut read_in_child = None;
        // Until exec, the child is a copy of this process; then the loader
        // maps libc, executable a moment after the file.
        while read_in_child.is_none() && Instant::now() < deadline {
            let exec_done =
                std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p.ends_with("cat"));
            read_in_child = read_process_maps(pid)
                .filter(|_| exec_done)
                .and_then(|m| {
                    m.mappings.into_iter().find(|m| {
                        m.path.as_deref() == Some(libc_path.as_str())
                            && (m.offset..m.offset + (m.end - m.start)).contains(&file_offset)
                    })
                })
                .map(|m| m.start + (file_offset - m.offset));
            std::thread::sleep(Duration::from_millis(5));
        }
        let read_in_child = read_in_child.expect("cat maps libc");
        let exit_maps = ExitMaps::default();
        let mut symbols = UserSymbols::with_exit_maps(exit_maps.clone());
        assert!(exit_maps.record_now(pid));
        drop(child.stdin.take());
        child.wait().expect("cat exits");
        let got = symbols.lookup(pid, &[read_in_child]);
        let sym = got[0].as_ref().unwrap_or_else(|| {
            panic!(
                "{read_in_child:#x} does not resolve from the kept map: {:?}\n{:#?}",
                exit_maps.get(pid).map(|m| m.find(read_in_child).cloned()),
                exit_maps.get(pid)
            )
        });
        assert!(sym.name.contains("read"), "{sym:?}");
        assert_eq!(sym.offset, 1);
        assert!(sym.module.as_deref().is_some_and(|m| m.contains("libc")));
        // Without the kept map, the same address of a gone process is unknown.
        assert_eq!(UserSymbols::new().lookup(pid, &[read_in_child]), vec![None]);
    }

    #[test]
    fn an_unknown_process_gives_nothing() {
        let mut symbols = UserSymbols::new();
        // Pid numbers above pid_max (4194304 at most) never exist.
        assert_eq!(symbols.lookup(u32::MAX - 1, &[0x1234]), vec![None]);
        assert!(!symbols.remember_process(u32::MAX - 1));
    }

    #[test]
    fn a_process_that_exited_keeps_its_symbols() {
        // A child that lives until its mappings are kept, then exits.
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        let pid = child.id();
        let mut symbols = UserSymbols::new();
        // Wait for exec and the loader to map libc.
        let libc_text = |maps: &ProcessMaps| {
            maps.mappings
                .iter()
                .find(|m| m.path.as_deref().is_some_and(|p| p.contains("libc.so")))
                .map(|m| m.start + (m.end - m.start) / 2)
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while read_process_maps(pid)
            .as_ref()
            .and_then(libc_text)
            .is_none()
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(symbols.remember_process(pid));
        let libc_text = libc_text(&symbols.processes[&pid].maps).expect("sleep maps libc");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(read_process_maps(pid).is_none(), "the process is gone");
        let sym = symbols.lookup(pid, &[libc_text]).pop().flatten();
        let sym = sym.expect("resolved from the kept mappings");
        assert!(sym.module.unwrap().contains("libc.so"));
    }

    #[test]
    fn a_refresh_reads_the_mappings_again() {
        let own = std::process::id();
        let mut symbols = UserSymbols::new();
        symbols.processes.insert(own, Known::default());
        symbols.cache.insert((own, 1), None);
        symbols.cache.insert((own + 1, 1), None);
        assert!(symbols.refresh_process(own));
        assert!(!symbols.processes[&own].maps.mappings.is_empty());
        assert_eq!(
            symbols.cache.len(),
            1,
            "only the other process's entries stay"
        );
        assert!(!symbols.refresh_process(u32::MAX - 1));
    }

    #[test]
    fn jit_frames_resolve_through_the_perf_map_after_exit() {
        // A pid that cannot exist, with a perf map (as a JIT leaves behind).
        let pid = 4_194_999;
        let path = PerfMap::path(pid);
        std::fs::write(&path, "7f0000001000 100 LazyCompile:*hot app.js:3\n").unwrap();
        let mut symbols = UserSymbols::new();
        let sym = symbols.lookup(pid, &[0x7f0000001010]).pop().flatten();
        let _ = std::fs::remove_file(&path);
        let sym = sym.expect("perf map frame");
        assert_eq!(sym.name, "LazyCompile:*hot app.js:3");
        assert_eq!(sym.offset, 0x10);
        assert_eq!(sym.module.as_deref(), Some(path.as_str()));
    }
}
