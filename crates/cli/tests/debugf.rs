//! Kernel tests of `debugf()` on the workload: its lines land in the
//! kernel's trace buffer (`bpf_trace_printk: TEXT`), formatted by the
//! kernel (strings by address, integers at their conversion's width), one
//! per event; past three arguments through `bpf_trace_vprintk`; weft's
//! own output has none of them, and stderr has bpftrace's warning.
//!
//! The kernel turns its `bpf_trace_printk` event on when such a program
//! loads, and leaves it on (weft, as bpftrace, leaves it: turning it off
//! at exit would lose the lines of another tracer's program still loaded).
//! An enabled event adds the kernel's command-line recorder to
//! `sched_switch`, whose kernel stacks then start in
//! `__traceiter_sched_switch`; these tests run one at a time and put the
//! event back as they found it, so the other tests see the machine as it
//! was.
//!
//! The trace buffer is the whole system's: each test writes a token of its
//! own (the test process's pid) and counts only the lines that hold it.

mod common;

use common::trace_workload;

/// The trace buffer's file, in tracefs as weft finds it: mounted on the
/// system, or else a detached mount of this test process's own, which
/// leaves the system's mounts as they are.
fn trace_file() -> Option<std::path::PathBuf> {
    runtime::tracefs::Tracefs::shared()
        .ok()
        .map(|t| t.root().join("trace"))
}

/// The `bpf_trace_printk` event's enable file's text.
fn printk_event_state() -> Option<String> {
    let trace = trace_file()?;
    let enable = trace.with_file_name("events/bpf_trace/bpf_trace_printk/enable");
    std::fs::read_to_string(enable).ok()
}

/// Runs `test` alone among these tests with the event on, then puts the
/// event's state back. (The kernel turns it on when the program loads; it
/// is turned on first too, as a full run of the workspace's tests was
/// once seen to lose a test's lines with it found off.)
fn restoring_the_event<T>(test: impl FnOnce() -> T) -> T {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    struct Restore(Option<String>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let (Some(state), Some(trace)) = (&self.0, trace_file()) {
                let enable = trace.with_file_name("events/bpf_trace/bpf_trace_printk/enable");
                let _ = std::fs::write(enable, state.trim());
            }
        }
    }
    let _restore = Restore(printk_event_state());
    if let Some(trace) = trace_file() {
        let enable = trace.with_file_name("events/bpf_trace/bpf_trace_printk/enable");
        let _ = std::fs::write(enable, "1");
    }
    test()
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
    testgate::require!(
        trace_file().is_some(),
        "tracefs can be mounted (root, Linux 5.2+)"
    );
    let token = format!("weft-debugf-{}", std::process::id());
    let script = format!(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ {{ @n = count(); debugf(\"{token} %s %d %x\", comm, -1, 16); }}"
    );
    let out = restoring_the_event(|| trace_workload(&script, "getppid 3", &[]));
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
    testgate::require!(
        trace_file().is_some(),
        "tracefs can be mounted (root, Linux 5.2+)"
    );
    let token = format!("weft-vprintk-{}", std::process::id());
    let script = format!(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ {{ $s = \"five\"; debugf(\"{token} %d %u %lld %llx %s\", 1, 2, (int64)-3, 255, $s); }}"
    );
    restoring_the_event(|| {
        trace_workload(&script, "getppid 2", &[]);
    });
    assert_eq!(
        printk_lines(&token),
        vec![format!("{token} 1 2 -3 ff five"); 2]
    );
}
