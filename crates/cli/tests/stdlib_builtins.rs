//! Kernel tests of bpftrace's standard-library builtins (issue 14) on the
//! workload, one behaviour each:
//!
//! - `errorf()`/`warnf()` print their text on stderr as an error or a
//!   warning naming the call (`stdin:1:C-C: ERROR: ...`), once per event,
//!   with the macro uses it was expanded from under it; the run goes on and
//!   exits 0; `--no-warnings` hides `warnf`; JSON has bpftrace's `errorf`
//!   record.
//! - `exit(code)` ends the run with that status, after printing the maps.
//! - `return value` leaves the probe: what follows does not run.
//! - `strerror()`/`signal_name()` print the names of the numbers the
//!   program kept: as map keys, values, `%s` arguments and in JSON.
//! - `ppid`, `pcomm`, `leader_tid`, `leader_comm` read the current task's
//!   parent and thread-group leader: weft and the workload.
//! - `assert(cond, msg)`: a false condition prints the error naming the
//!   call and ends the run with status 1; a true one does nothing.
//! - `probetype` names the probe's type (`special` for begin/end), and
//!   `probe` of `begin` is `begin` (of `BEGIN`, `BEGIN`).
//! - `config().KEY` is the run's setting: the script's `config` block,
//!   under the environment's `BPFTRACE_*`.
//! - Named parameters after `--` reach `getopt()` with their types, mixed
//!   with positional ones; a value of the wrong type, an option no
//!   `getopt` names and `-- --help` end the run with bpftrace's lines.

mod common;

use std::time::Duration;

use common::{run_weft, trace_workload, workload};

#[test]
fn errorf_and_warnf_name_the_call_once_per_event() {
    require_root!();
    let script = "macro check(n) { if (n > 1) { errorf(\"n is %d\", n); } }\n\
        tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n = count(); warnf(\"seen %s\", comm); check(2); }";
    let out = trace_workload(script, "getppid 3", &[]);
    assert_eq!(out.stdout, "\n\n@n: 3\n");
    let once = "stdin:2:69-91: WARNING: seen weftwl\n\
        stdin:1:31-51: ERROR: n is 2\n\
        stdin:2:93-101: ERROR: expanded from\n\
        tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n = count(); warnf(\"seen %s\", comm); check(2); }\n\
        \x20                                                                                           ~~~~~~~~\n";
    assert_eq!(out.stderr, once.repeat(3), "stderr:\n{}", out.stderr);
}

#[test]
fn no_warnings_hides_warnf_but_not_errorf() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { warnf(\"w\"); errorf(\"e %d\", 1); }";
    let out = trace_workload(script, "getppid 2", &["--no-warnings"]);
    assert_eq!(out.stderr, "stdin:1:67-84: ERROR: e 1\n".repeat(2));
}

#[test]
fn errorf_in_json_is_an_errorf_record() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { errorf(\"bad \\\"%s\\\"\\n\", comm); }";
    let out = trace_workload(script, "getppid 1", &["-f", "json"]);
    assert_eq!(
        out.stdout,
        "{\"type\": \"errorf\", \"msg\": \"bad \\\"weftwl\\\"\\n\", \"filename\": \"stdin\", \"line\": 1, \"col\": 55}\n"
    );
}

#[test]
fn exit_code_is_weft_s_status_after_the_maps() {
    require_root!();
    let cmd = format!("{} getppid 1", workload().display());
    let script =
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n = count(); exit(300 + 2); }";
    let out = run_weft(&["-q", "-c", &cmd, "-e", script], Duration::from_secs(30));
    assert!(!out.timed_out, "stderr:\n{}", out.stderr);
    // 302's low byte, as a process's status is.
    assert_eq!(out.status, Some(46), "stderr:\n{}", out.stderr);
    assert_eq!(out.stdout, "\n\n@n: 1\n");
}

#[test]
fn return_with_a_value_leaves_the_probe() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @before = count(); $r = 1; if ($r) { return $r + 1; } @after = count(); }";
    let out = trace_workload(script, "getppid 4", &[]);
    assert_eq!(out.stdout, "\n\n@before: 4\n");
}

#[test]
fn named_parameters_reach_getopt_with_their_types() {
    require_root!();
    let script = r#"tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @[$1, getopt("n", 10), getopt("neg", -1), getopt("on"), getopt("off", true), getopt("s", "dflt"), $2] = count(); }"#;
    let out = trace_workload(
        script,
        "getppid 3",
        &[
            "first", "--", "--n=0x20", "--neg=-7", "--on", "--off=No", "second",
        ],
    );
    assert_eq!(
        out.stdout,
        "\n\n@[first, 32, -7, true, false, dflt, second]: 3\n"
    );
}

#[test]
fn named_parameter_errors_say_what_was_expected() {
    let script = r#"BEGIN { print((getopt("aa", 10, "Description of aa"), getopt("bb"))); }"#;
    let run = |extra: &[&str]| {
        let mut args = vec!["-e", script, "--"];
        args.extend_from_slice(extra);
        let out = run_weft(&args, Duration::from_secs(30));
        assert_eq!(out.status, Some(1), "stderr:\n{}", out.stderr);
        assert_eq!(out.stdout, "");
        out.stderr
    };
    assert_eq!(
        run(&["--aa=False"]),
        "ERROR: program command line option --aa invalid integer (value: False)\n"
    );
    assert_eq!(
        run(&["--cc", "--dd=1"]),
        "ERROR: unexpected program command line options: --cc, --dd\n\
         HINT: expected program options: --aa, --bb\n"
    );
    assert_eq!(
        run(&["--help"]),
        "HINT: expected program options:\n--aa: Description of aa\n--bb\n"
    );
}

#[test]
fn strerror_and_signal_name_print_names() {
    require_root!();
    // Each openat under a file fails with -ENOTDIR (-20); the loader's own
    // failed opens (ENOENT) are left out.
    let script = "tracepoint:syscalls:sys_exit_openat /pid == cpid && args->ret == -20/ { \
        @[strerror(-args->ret)] = count(); @sig[signal_name(args->ret + 35)] = count(); \
        @last = strerror(args->ret); printf(\"%s, %s\\n\", strerror(args->ret), signal_name(99)); }";
    let out = trace_workload(script, "openat /proc/self/exe/x 3", &[]);
    assert_eq!(
        out.stdout,
        "Not a directory, N/A\n".repeat(3)
            + "\n\n@[Not a directory]: 3\n@last: Not a directory\n@sig[Terminated]: 3\n"
    );
    let out = trace_workload(script, "openat /proc/self/exe/x 1", &["-f", "json"]);
    assert!(
        out.stdout
            .contains(r#"{"type": "map", "data": {"@sig": {"Terminated": 1}}}"#),
        "{}",
        out.stdout
    );
}

#[test]
fn parent_and_leader_of_the_current_task() {
    require_root!();
    // The workload's parent is weft (`-c`), its leader itself; getppid()
    // returns what `ppid` reads.
    let script = "tracepoint:syscalls:sys_exit_getppid /pid == cpid/ { \
        @[pcomm, leader_comm(), leader_tid == pid, args->ret == ppid, ppid(curtask) == ppid] = count(); }";
    let out = trace_workload(script, "getppid 4", &[]);
    assert_eq!(out.stdout, "\n\n@[weft, weftwl, true, true, true]: 4\n");
}

#[test]
fn a_false_assert_ends_the_run_with_status_1() {
    require_root!();
    let script = "tracepoint:syscalls:sys_exit_getppid /pid == cpid/ { @n = count(); assert(args->ret == 0, \"ppid is not zero\"); }";
    let cmd = format!("{} getppid 1", workload().display());
    let out = run_weft(&["-q", "-c", &cmd, "-e", script], Duration::from_secs(30));
    assert_eq!(out.status, Some(1), "stderr:\n{}", out.stderr);
    assert_eq!(out.stdout, "\n\n@n: 1\n");
    assert_eq!(
        out.stderr,
        "stdin:1:68-110: ERROR: assert failed: ppid is not zero\n"
    );
    let holds = script.replace("args->ret == 0", "args->ret != 0");
    let out = trace_workload(&holds, "getppid 3", &[]);
    assert_eq!(out.stdout, "\n\n@n: 3\n");
    assert_eq!(out.stderr, "");
}

#[test]
fn probetype_and_the_begin_probe_s_name() {
    require_root!();
    let script = "begin { printf(\"%s|%s\\n\", probe, probetype); } \
        tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @[probetype(), __builtin_probetype] = count(); } \
        END { printf(\"%s|%s\\n\", probe, probetype); }";
    let out = trace_workload(script, "getppid 2", &[]);
    assert_eq!(
        out.stdout,
        "begin|special\nEND|special\n\n\n@[tracepoint, tracepoint]: 2\n"
    );
}

#[test]
fn config_record_reads_the_run_s_settings() {
    require_root!();
    let script = "config = { stack_mode = perf; max_strlen = 100 } \
        tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
        @[config().stack_mode, __builtin_config.max_strlen, config.cpp_demangle, config().license] = count(); }";
    let cmd = format!("{} getppid 2", workload().display());
    let out = common::run(
        std::process::Command::new(common::weft())
            .env("BPFTRACE_MAX_STRLEN", "50")
            .args(["-q", "-c", &cmd, "-e", script]),
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(out.stdout, "\n\n@[perf, 50, true, GPL]: 2\n");
}
