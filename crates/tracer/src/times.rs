//! `strftime()` and `time()` texts: the kernel's monotonic times as
//! local wall-clock time.

/// `strftime(fmt, ns)`: `ns` of the monotonic clock (`nsecs`) as wall-clock
/// time, with bpftrace's `%f` (microseconds) besides strftime(3)'s fields.
/// `strftime()`'s text: `ns` in the script's time format number `format`.
pub fn time_text(formats: &[String], ns: u64, format: u32) -> String {
    let fmt = formats.get(format as usize);
    strftime_ns(fmt.map_or("%H:%M:%S", String::as_str), ns)
}

fn strftime_ns(fmt: &str, ns: u64) -> String {
    static OFFSET_NS: std::sync::OnceLock<i128> = std::sync::OnceLock::new();
    let offset = *OFFSET_NS.get_or_init(runtime::clock::realtime_minus_monotonic_ns);
    let wall = offset + ns as i128;
    let (secs, nanos) = (
        wall.div_euclid(1_000_000_000),
        wall.rem_euclid(1_000_000_000),
    );
    let fmt = fmt.replace("%f", &format!("{:06}", nanos / 1000));
    runtime::clock::strftime_local(&fmt, secs as i64)
}

/// `strftime(fmt)` of the local time now (bpftrace's `time()`).
pub fn strftime_now(fmt: &str) -> String {
    runtime::clock::strftime_local(fmt, runtime::clock::now_secs())
}
