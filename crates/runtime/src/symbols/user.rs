//! User-space addresses with blazesym: ELF symbol tables of the files mapped
//! by a live process (`/proc/PID/maps` and `map_files`) and of their debug
//! files (`.gnu_debuglink`, `/usr/lib/debug`). Results are cached
//! per `(pid, address)`, so a process that has exited keeps the names found
//! while it was alive; an address that cannot be resolved stays `None`
//! (printed in hex).

use std::collections::HashMap;

use blazesym::Pid;
use blazesym::symbolize::source::{Process, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer};

use super::ResolvedSymbol;

/// The user-space symbolizer with its per-pid cache.
pub struct UserSymbols {
    symbolizer: Symbolizer,
    cache: HashMap<(u32, u64), Option<ResolvedSymbol>>,
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
        UserSymbols {
            symbolizer: Symbolizer::builder()
                .enable_code_info(false)
                .enable_inlined_fns(false)
                .build(),
            cache: HashMap::new(),
        }
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

    /// Symbolizes with the debug files that installed `-dbg` packages link
    /// to (local functions such as `__libc_start_call_main` live only there);
    /// if one of them cannot be read, again with the mapped files alone.
    fn symbolize(&self, pid: u32, addrs: &[u64]) -> Vec<Option<ResolvedSymbol>> {
        self.symbolize_with(pid, addrs, true)
            .or_else(|| self.symbolize_with(pid, addrs, false))
            // The process is gone or unreadable: every address stays unresolved.
            .unwrap_or_else(|| vec![None; addrs.len()])
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
        Some(
            results
                .into_iter()
                .map(|r| match r {
                    Symbolized::Sym(sym) => Some(ResolvedSymbol {
                        name: sym.name.into_owned(),
                        offset: sym.offset as u64,
                        module: sym.module.map(|m| m.to_string_lossy().into_owned()),
                    }),
                    Symbolized::Unknown(_) => None,
                })
                .collect(),
        )
    }
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
    fn an_unknown_process_gives_nothing() {
        let mut symbols = UserSymbols::new();
        // Pid numbers above pid_max (4194304 at most) never exist.
        assert_eq!(symbols.lookup(u32::MAX - 1, &[0x1234]), vec![None]);
    }
}
