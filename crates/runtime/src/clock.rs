//! Clocks and local time for user space: the kernel's clocks as
//! `bpf_ktime_get_ns` and `bpf_ktime_get_boot_ns` read them, their offsets
//! to wall-clock time, and `strftime(3)` in the local time zone.

/// Nanoseconds of `clock` now.
fn read_ns(clock: libc::clockid_t) -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

/// `CLOCK_MONOTONIC` now, in nanoseconds: the clock of `bpf_ktime_get_ns`.
pub fn monotonic_ns() -> u64 {
    crate::sys::monotonic_ns()
}

/// `CLOCK_REALTIME` minus `CLOCK_MONOTONIC`, now: added to a monotonic time
/// (`nsecs`), the Unix time in nanoseconds.
pub fn realtime_minus_monotonic_ns() -> i128 {
    read_ns(libc::CLOCK_REALTIME) - read_ns(libc::CLOCK_MONOTONIC)
}

/// `CLOCK_REALTIME` minus `CLOCK_BOOTTIME`, now (the clock of
/// `bpf_ktime_get_boot_ns`, which packet captures are stamped with).
pub fn realtime_minus_boottime_ns() -> i128 {
    read_ns(libc::CLOCK_REALTIME) - read_ns(libc::CLOCK_BOOTTIME)
}

/// Seconds since the epoch, now.
pub fn now_secs() -> i64 {
    // SAFETY: time() accepts a null pointer.
    unsafe { libc::time(std::ptr::null_mut()) }
}

/// The local time's offset from UTC, in seconds, at `secs` since the epoch.
pub fn local_utc_offset(secs: i64) -> i64 {
    let secs = secs as libc::time_t;
    // SAFETY: localtime_r gets valid pointers; all-zero is a valid tm.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&secs, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff
    }
}

/// `strftime(3)` of `secs` since the epoch in local time (at most 255
/// bytes; empty for a format holding a NUL).
pub fn strftime_local(fmt: &str, secs: i64) -> String {
    let Ok(cfmt) = std::ffi::CString::new(fmt) else {
        return String::new();
    };
    let secs = secs as libc::time_t;
    // SAFETY: localtime_r/strftime get valid pointers and a sized buffer.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&secs, &mut tm);
        let mut buf = [0u8; 256];
        let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), cfmt.as_ptr(), &tm);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}
