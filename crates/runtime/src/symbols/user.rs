//! User-space addresses with blazesym: ELF symbol tables of the files mapped
//! by a live process (`/proc/PID/maps` and `map_files`) and of their debug
//! files (`.gnu_debuglink`, `/usr/lib/debug`). Results are cached
//! per `(pid, address)`, so a process that has exited keeps the names found
//! while it was alive; an address that cannot be resolved stays `None`
//! (printed in hex).
//!
//! A process that has exited can still be symbolized if its memory map was
//! kept at its exit ([`ExitMaps`]): each address becomes a file and an
//! offset in it, read from the files on disk. Keeping the map takes a
//! fraction of a millisecond; symbolizing takes tens, so a traced command is
//! held at its exit only for the former.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use blazesym::Pid;
use blazesym::symbolize::source::{Elf, Process, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};

use super::ResolvedSymbol;

/// The user-space symbolizer with its per-pid cache.
pub struct UserSymbols {
    symbolizer: Symbolizer,
    cache: HashMap<(u32, u64), Option<ResolvedSymbol>>,
    exit_maps: ExitMaps,
}

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

    /// Where `addr` lies in the kept map of `pid`: `Some(None)` when the map
    /// was kept but no file backs the address, `None` when no map was kept.
    fn place(&self, pid: u32, addr: u64) -> Option<Option<(String, u64)>> {
        let maps = self.0.lock().unwrap_or_else(|e| e.into_inner());
        maps.get(&pid).map(|text| uelf::file_offset(text, addr))
    }
}

impl std::fmt::Debug for UserSymbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserSymbols")
            .field("cached", &self.cache.len())
            .finish()
    }
}

impl Default for UserSymbols {
    fn default() -> Self {
        UserSymbols::new()
    }
}

impl UserSymbols {
    pub fn new() -> UserSymbols {
        UserSymbols::with_exit_maps(ExitMaps::default())
    }

    /// A symbolizer that resolves the processes of `exit_maps` from their
    /// kept memory maps.
    pub fn with_exit_maps(exit_maps: ExitMaps) -> UserSymbols {
        UserSymbols {
            symbolizer: Symbolizer::builder()
                .enable_code_info(false)
                .enable_inlined_fns(false)
                .build(),
            cache: HashMap::new(),
            exit_maps,
        }
    }

    /// Resolves a stack's frames of process `pid` (the first is the exact
    /// instruction pointer, the others return addresses looked up at `addr - 1`).
    pub fn frames(&mut self, pid: u32, addrs: &[u64]) -> Vec<Option<ResolvedSymbol>> {
        let probes = frame_probes(addrs);
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

    /// Resolves exact addresses of process `pid`.
    pub fn lookup(&mut self, pid: u32, addrs: &[u64]) -> Vec<Option<ResolvedSymbol>> {
        let missing: Vec<u64> = addrs
            .iter()
            .copied()
            .filter(|a| !self.cache.contains_key(&(pid, *a)))
            .collect();
        if !missing.is_empty() {
            let found = self.symbolize(pid, &missing);
            for (addr, sym) in missing.iter().zip(found) {
                self.cache.insert((pid, *addr), sym);
            }
        }
        addrs
            .iter()
            .map(|a| self.cache.get(&(pid, *a)).cloned().flatten())
            .collect()
    }

    /// Symbolizes from the kept memory map of an exited process, reading
    /// each file once for all its offsets.
    fn symbolize_exited(&self, pid: u32, addrs: &[u64]) -> Option<Vec<Option<ResolvedSymbol>>> {
        let mut found = vec![None; addrs.len()];
        let mut by_file: HashMap<String, Vec<(usize, u64)>> = HashMap::new();
        for (i, &addr) in addrs.iter().enumerate() {
            if let Some((path, offset)) = self.exit_maps.place(pid, addr)? {
                by_file.entry(path).or_default().push((i, offset));
            }
        }
        for (path, places) in by_file {
            let offsets: Vec<u64> = places.iter().map(|&(_, offset)| offset).collect();
            let path = Path::new(&path);
            let syms = self
                .symbolize_file(path, &offsets, true)
                .or_else(|| self.symbolize_file(path, &offsets, false))
                .unwrap_or_else(|| vec![None; offsets.len()]);
            for ((i, _), sym) in places.into_iter().zip(syms) {
                found[i] = sym;
            }
        }
        Some(found)
    }

    fn symbolize_file(
        &self,
        path: &Path,
        offsets: &[u64],
        debug_syms: bool,
    ) -> Option<Vec<Option<ResolvedSymbol>>> {
        let mut elf = Elf::new(path);
        elf.debug_syms = debug_syms;
        let results = self
            .symbolizer
            .symbolize(&Source::Elf(elf), Input::FileOffset(offsets))
            .ok()?;
        Some(results.into_iter().map(resolved).collect())
    }

    /// Symbolizes with the debug files that installed `-dbg` packages link
    /// to (local functions such as `__libc_start_call_main` live only there);
    /// if one of them cannot be read, again with the mapped files alone.
    /// An exited process whose memory map was kept is symbolized from it.
    fn symbolize(&self, pid: u32, addrs: &[u64]) -> Vec<Option<ResolvedSymbol>> {
        if let Some(found) = self.symbolize_exited(pid, addrs) {
            return found;
        }
        let mut found = self
            .symbolize_with(pid, addrs, true)
            .or_else(|| self.symbolize_with(pid, addrs, false))
            // The process is gone or unreadable: every address stays unresolved.
            .unwrap_or_else(|| vec![None; addrs.len()]);
        // It may have exited while it was read; its map was kept before its
        // memory went, so it is there now if it is kept at all.
        if found.iter().any(Option::is_none) {
            if let Some(again) = self.symbolize_exited(pid, addrs) {
                for (sym, kept) in found.iter_mut().zip(again) {
                    if sym.is_none() {
                        *sym = kept;
                    }
                }
            }
        }
        found
    }

    fn symbolize_with(
        &self,
        pid: u32,
        addrs: &[u64],
        debug_syms: bool,
    ) -> Option<Vec<Option<ResolvedSymbol>>> {
        let mut process = Process::new(Pid::from(pid));
        process.debug_syms = debug_syms;
        process.perf_map = false;
        let source = Source::Process(process);
        let results = self
            .symbolizer
            .symbolize(&source, Input::AbsAddr(addrs))
            .ok()?;
        Some(results.into_iter().map(resolved).collect())
    }
}

fn resolved(r: Symbolized<'_>) -> Option<ResolvedSymbol> {
    match r {
        Symbolized::Sym(sym) => Some(ResolvedSymbol {
            name: sym.name.into_owned(),
            offset: sym.offset as u64,
            module: sym.module.map(|m| m.to_string_lossy().into_owned()),
        }),
        Symbolized::Unknown(_) => None,
    }
}

/// The addresses a stack's frames are looked up at: the first exactly (the
/// instruction pointer), the others (return addresses) one byte before.
fn frame_probes(addrs: &[u64]) -> Vec<u64> {
    addrs
        .iter()
        .enumerate()
        .map(|(i, &a)| if i == 0 { a } else { a.saturating_sub(1) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn addresses_resolve_from_the_map_kept_at_exit() {
        // A child that waits in read() until told to exit.
        let mut child = std::process::Command::new("/bin/cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("cat");
        let pid = child.id();
        // An address inside libc's `read` in the child (libc maps at the same
        // offsets in every process, so ours gives the file offset).
        let read_in_child = {
            // SAFETY: dlsym with a NUL-terminated name returns an address or null.
            let ours = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"read".as_ptr()) } as u64;
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
            let theirs = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
            let base = |maps: &str| {
                maps.lines()
                    .find(|l| l.contains("libc.so") && l.contains(" 00000000 "))
                    .and_then(|l| u64::from_str_radix(l.split('-').next()?, 16).ok())
            };
            match (base(&maps), base(&theirs)) {
                (Some(a), Some(b)) => ours - a + b + 1,
                _ => {
                    eprintln!("skipped: libc is not mapped here");
                    let _ = child.kill();
                    let _ = child.wait();
                    return;
                }
            }
        };
        let exit_maps = ExitMaps::default();
        let mut symbols = UserSymbols::with_exit_maps(exit_maps.clone());
        assert!(exit_maps.record_now(pid));
        drop(child.stdin.take());
        child.wait().expect("cat exits");
        let got = symbols.lookup(pid, &[read_in_child]);
        let sym = got[0]
            .as_ref()
            .expect("the address resolves from the kept map");
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
    }
}
