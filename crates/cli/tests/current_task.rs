//! Kernel tests of the builtins about the current task that bpftrace's
//! current release added (issue 14), on the workload:
//!
//! - In a nested pid namespace (`unshare --pid`), `pid`, `tid(curr_ns)`,
//!   `cpid` and a user stack's pid are the ids seen from weft's namespace
//!   (the workload weft starts there is pid 2), `pid(init)` the kernel's
//!   own; the stack still resolves its symbols from that namespace's /proc.
//! - Outside one, `pid(curr_ns)` and `pid(init)` are the same.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{trace_workload, weft, workload};

/// `weft -q -c '<workload> steps' -e script` run as pid 1 of a new pid
/// namespace with its own /proc.
fn trace_in_pid_namespace(script: &str, steps: &str) -> common::Outcome {
    let cmd = format!("{} {steps}", workload().display());
    let out = common::run(
        Command::new("unshare")
            .args(["--fork", "--pid", "--mount-proc"])
            .arg(weft())
            .args(["-q", "-c", &cmd, "-e", script]),
        Duration::from_secs(30),
    );
    common::assert_succeeded(&out);
    out
}

#[test]
fn pids_in_a_nested_namespace_are_seen_from_it() {
    require_root!();
    let wl = workload();
    let script = format!(
        "uprobe:{}:weft_workload_marker /pid == cpid/ {{ @[ustack(1), pid, tid(curr_ns), pid(init) == pid, tid(init) > 2] = count(); }}",
        wl.display()
    );
    let out = trace_in_pid_namespace(&script, "call 3");
    assert_eq!(
        out.stdout, "\n\n@[\n        weft_workload_marker+0\n, 2, 2, false, true]: 3\n",
        "stderr:\n{}",
        out.stderr
    );
}

#[test]
fn outside_a_nested_namespace_curr_ns_is_init() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @[pid(curr_ns) == pid(init), tid == tid(init), pid == cpid] = count(); }";
    let out = trace_workload(script, "getppid 2", &[]);
    assert_eq!(out.stdout, "\n\n@[true, true, true]: 2\n");
}

/// The workload run as user `uid` under `setpriv`, which execs it (so
/// `cpid` is the workload).
fn as_user(uid: u32, steps: &str) -> String {
    format!(
        "setpriv --reuid {uid} --regid {uid} --clear-groups {} {steps}",
        workload().display()
    )
}

#[test]
fn username_is_the_name_etc_passwd_gives_the_uid() {
    require_root!();
    testgate::require!(
        std::fs::read_to_string("/etc/passwd").is_ok_and(|p| p.contains("\nnobody:x:65534:")),
        "/etc/passwd names the user nobody (65534)"
    );
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @[username, uid] = count(); printf(\"%s|\\n\", username()); }";
    let cmd = as_user(65534, "getppid 2");
    let out = common::run_weft(&["-q", "-c", &cmd, "-e", script], Duration::from_secs(30));
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(out.stdout, "nobody|\nnobody|\n\n\n@[nobody, 65534]: 2\n");
}

#[test]
fn username_of_a_uid_no_user_has_is_empty() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @u = username; printf(\"[%s]\\n\", username); }";
    let cmd = as_user(4242, "getppid 1");
    let out = common::run_weft(
        &["-q", "-f", "json", "-c", &cmd, "-e", script],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(
        out.stdout,
        "{\"type\": \"printf\", \"data\": \"[]\\n\"}\n{\"type\": \"map\", \"data\": {\"@u\": \"\"}}\n"
    );
}

#[test]
fn len_of_a_stack_is_its_number_of_frames() {
    require_root!();
    let wl = workload();
    let script = format!(
        "uprobe:{}:weft_workload_marker /pid == cpid/ {{ @s[ustack(5)] = count(); $x = ustack(5); @a = len($x); @b = len(ustack(1)); }}",
        wl.display()
    );
    let out = trace_workload(&script, "call 2", &[]);
    // The frames `@s` prints are those `len()` counts.
    let frames = out
        .stdout
        .lines()
        .skip_while(|l| *l != "@s[")
        .skip(1)
        .take_while(|l| !l.starts_with(']'))
        .count();
    assert!(frames >= 1, "stdout:\n{}", out.stdout);
    let expected = format!("@a: {frames}\n@b: 1\n");
    assert!(
        out.stdout.starts_with(&format!("\n\n{expected}")),
        "stdout:\n{}",
        out.stdout
    );
}
