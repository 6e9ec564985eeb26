//! Symbolization in user space: kernel addresses from `/proc/kallsyms`
//! ([`Kallsyms`], modules included), user addresses with blazesym
//! ([`UserSymbols`]: each process's mappings kept, so it resolves after it
//! exits; JIT code through `/tmp/perf-PID.map`, [`PerfMap`]). Stack frames after the first are return addresses: they are
//! looked up at `addr - 1` so that a call that ends a function still names
//! that function, and the offset shown is from the real address.

mod kallsyms;
mod perf_map;
pub mod unwind;
mod user;

pub use kallsyms::Kallsyms;
pub use perf_map::PerfMap;
pub use unwind::{StackCopy, TRUNCATED_FRAME, Unwinder};
pub use user::{ExitMaps, UserSymbols, read_process_maps};

/// CPU time this thread has used: where symbolization's time goes is told
/// in CPU time, which a busy machine does not inflate as it does wall time.
pub fn thread_cpu_time() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// What an address resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedSymbol {
    pub name: String,
    /// Bytes from the symbol's start to the address.
    pub offset: u64,
    /// The file it was found in (user space only).
    pub module: Option<String>,
}
