//! Kernel tests of `debugf()` on the workload: its lines land in the
//! kernel's trace buffer (`bpf_trace_printk: TEXT`), formatted by the
//! kernel (strings by address, integers at their conversion's width), one
//! per event; past three arguments through `bpf_trace_vprintk`; weft's
//! own output has none of them, and stderr has bpftrace's warning.
//!
//! The trace buffer is the whole system's: each test writes a token of its
//! own (the test process's pid) and counts only the lines that hold it.

mod common;

use common::trace_workload;

/// The trace buffer's file, where tracefs is mounted.
fn trace_file() -> Option<std::path::PathBuf> {
    [
        "/sys/kernel/tracing/trace",
        "/sys/kernel/debug/tracing/trace",
    ]
    .iter()
    .map(std::path::PathBuf::from)
    .find(|p| p.exists())
}

/// The text after `bpf_trace_printk: ` of each line of the trace buffer
/// that holds `token`.
fn printk_lines(token: &str) -> Vec<String> {
    let text = std::fs::read_to_string(trace_file().expect("tracefs")).unwrap_or_default();
    text.lines()
        .filter(|l| l.contains(token))
        .filter_map(|l| l.split("bpf_trace_printk: ").nth(1))
        .map(str::to_string)
        .collect()
}

#[test]
fn debugf_writes_each_event_to_the_trace_buffer() {
    require_root!();
    testgate::require!(trace_file().is_some(), "tracefs is mounted");
    let token = format!("weft-debugf-{}", std::process::id());
    let script = format!(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ {{ @n = count(); debugf(\"{token} %s %d %x\", comm, -1, 16); }}"
    );
    let out = trace_workload(&script, "getppid 3", &[]);
    assert_eq!(out.stdout, "\n\n@n: 3\n");
    assert_eq!(
        printk_lines(&token),
        vec![format!("{token} weftwl -1 10"); 3]
    );
    assert!(
        out.stderr.contains("WARNING: The debugf() builtin is not recommended for production use. For more information see bpf_trace_printk in bpf-helpers(7)."),
        "stderr:\n{}",
        out.stderr
    );
}

#[test]
fn debugf_past_three_arguments_uses_vprintk() {
    require_root!();
    testgate::require!(trace_file().is_some(), "tracefs is mounted");
    let token = format!("weft-vprintk-{}", std::process::id());
    let script = format!(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ {{ $s = \"five\"; debugf(\"{token} %d %u %lld %llx %s\", 1, 2, (int64)-3, 255, $s); }}"
    );
    trace_workload(&script, "getppid 2", &[]);
    assert_eq!(
        printk_lines(&token),
        vec![format!("{token} 1 2 -3 ff five"); 2]
    );
}
