//! What weft itself uses: its CPU time (`getrusage`) and the CPUs there are
//! to spread it over, for `--stats` and the live status line.

/// weft's CPU time so far (every thread), in nanoseconds: (user, system).
pub fn own_cpu_ns() -> (u64, u64) {
    // SAFETY: all-zero is a valid rusage to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid and writable.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    (ns(usage.ru_utime), ns(usage.ru_stime))
}

/// CPUs online now.
pub fn online_cpus() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(n).unwrap_or(1).max(1)
}
