//! Kernel tests of aggregations read inside probes (`if (@n > 5)`,
//! `(bool)@a`, `@a + @b`, `@[@a] = 1`), as bpftrace's current release reads
//! them: each is merged over every CPU in the kernel the way user space
//! merges it when printing. The workload makes its calls on CPU 0 and then
//! on the last CPU, so a read that looked at one CPU's value only would see
//! part of the total.

mod common;

use common::trace_workload;

/// The CPU the second half of the calls runs on: the last possible one.
fn other_cpu() -> u64 {
    let possible = std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .expect("/sys/devices/system/cpu/possible");
    // `0-1`, or `0` on a one-CPU machine.
    possible
        .trim()
        .rsplit(['-', ','])
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a CPU number")
}

/// What `sum(cpu + 1)`, `max(cpu * 10 + 5)` and `avg(cpu * 100)` merge to
/// over 30 calls on CPU 0 and 70 on `other`.
struct Merged {
    sum: u64,
    max: u64,
    avg: u64,
}

/// Runs `script` on the workload's 30 calls on CPU 0, then 70 on `other`.
fn on_both_cpus(script: &str, other: u64) -> (common::Outcome, Merged) {
    let out = trace_workload(
        script,
        &format!("on-cpu 0 getppid 30 on-cpu {other} getppid 70"),
        &[],
    );
    let merged = Merged {
        sum: 30 + 70 * (other + 1),
        max: other * 10 + 5,
        avg: 70 * other * 100 / 100,
    };
    (out, merged)
}

#[test]
fn reads_merge_every_cpu() {
    require_root!();
    let other = other_cpu();
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
        @c = count(); @s = sum(cpu + 1); @mn = min(cpu * 10 + 5); @mx = max(cpu * 10 + 5); \
        @a = avg(cpu * 100); @neg = sum(-2); \
        @last = (@c, @s, @mn, @mx, @a, @neg, (bool)@c); \
        if (@c == 30) { @at30 = (@s, @mx); } \
        @by[@c % 2 == 0] = count(); }";
    let (out, Merged { sum, max, avg }) = on_both_cpus(script, other);
    common::expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            &format!("@last: (100, {sum}, 5, {max}, {avg}, -200, true)"),
            "@at30: (30, 5)",
            "@by[true]: 50",
            "@by[false]: 50",
        ],
    );
}

#[test]
fn reads_of_untouched_elements_are_zero() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
        if (@seen[tid] == 0) { @first = count(); } @seen[tid] = count(); \
        @none = (@empty[1], (bool)@empty[2]); } \
        tracepoint:syscalls:sys_enter_getpid /pid == 0 && pid != 0/ { @empty[1] = count(); }";
    let out = trace_workload(script, "getppid 5", &[]);
    common::expect_lines(
        &out.stdout,
        &out.stderr,
        &["@first: 1", "@none: (0, false)"],
    );
}

#[test]
fn map_loops_over_aggregations_merge_every_cpu() {
    require_root!();
    // `for ($kv : @m)` over a map of aggregations gives each element's value
    // merged over the CPUs (the callback walks them per element), with a
    // one-key and a two-key map.
    let other = other_cpu();
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
        @c[1] = count(); @s[\"x\", 2] = sum(cpu + 1); @mn[1] = min(cpu * 10 + 5); \
        @mx[1] = max(cpu * 10 + 5); @a[1] = avg(cpu * 100); } \
        tracepoint:syscalls:sys_exit_getppid /pid == cpid/ { \
        for ($kv : @c) { @lc = $kv.1; } \
        for ($kv : @s) { @ls[$kv.0.0, $kv.0.1] = $kv.1; } \
        for ($kv : @mn) { @lmn = $kv.1; } for ($kv : @mx) { @lmx = $kv.1; } \
        for ($kv : @a) { @la = $kv.1; } }";
    let (out, Merged { sum, max, avg }) = on_both_cpus(script, other);
    common::expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            "@lc: 100",
            &format!("@ls[x, 2]: {sum}"),
            "@lmn: 5",
            &format!("@lmx: {max}"),
            &format!("@la: {avg}"),
        ],
    );
}
