//! bpftrace's options for what a script may do and where it comes from:
//! `--unsafe` (`system()`, `signal()`, `override()`), `-k`/`-kk` (failed
//! helper calls reported with their line), `-I DIR` / `--include FILE`,
//! and a script read from stdin (`-`).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{run_weft, scratch, wait_with_timeout, weft, workload};

#[test]
fn unsafe_builtins_need_the_flag() {
    // A compile error that names the flag: no root needed.
    for (script, name, what) in [
        (r#"BEGIN { system("true"); }"#, "system", "runs a command"),
        (
            r#"tracepoint:syscalls:sys_enter_getppid { signal("SIGKILL"); }"#,
            "signal",
            "sends a signal",
        ),
        (
            "kprobe:vfs_read { override(-1); }",
            "override",
            "changes what a kernel function returns",
        ),
        (
            r#"tracepoint:syscalls:sys_enter_openat { write_user(args.filename, "x", 1); }"#,
            "write_user",
            "writes to a process's memory",
        ),
    ] {
        let out = run_weft(&["-d", "bpf", "-e", script], Duration::from_secs(20));
        assert_eq!(out.status, Some(1), "{script}");
        // bpftrace's sentence, then what the call does under it.
        assert!(
            out.stderr.contains(&format!(
                "ERROR: {name}() is unsafe. To use you need the --unsafe flag\n"
            )) && out.stderr.contains(what),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("run weft with --unsafe"),
            "{}",
            out.stderr
        );
    }
    // With the flag they compile (a kprobe compiles where kprobes cannot attach).
    let out = run_weft(
        &[
            "--unsafe",
            "-d",
            "bpf",
            "-e",
            r#"kprobe:vfs_read { override(-1); } tracepoint:syscalls:sys_enter_getppid { signal("SIGUSR1"); signal(10); signal(tid % 2 + 10); }"#,
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains("call bpf_override_return#58"),
        "{}",
        out.stdout
    );
    assert_eq!(out.stdout.matches("call bpf_send_signal#109").count(), 3);
}

#[test]
fn signal_only_where_a_task_runs_and_only_signals() {
    for (script, message) in [
        (
            r#"BEGIN { signal("SIGKILL"); }"#,
            "signal() cannot be used in BEGIN probes",
        ),
        (
            r#"interval:s:1 { signal("SIGKILL"); }"#,
            "signal() cannot be used in interval probes",
        ),
        (
            r#"tracepoint:syscalls:sys_enter_getppid { signal("SIGFOO"); }"#,
            "SIGFOO is not a valid signal",
        ),
        (
            r#"tracepoint:syscalls:sys_enter_getppid { signal(65); }"#,
            "65 is not a valid signal",
        ),
        (
            r#"tracepoint:syscalls:sys_enter_getppid { override(1); }"#,
            "override() cannot be used in tracepoint probes",
        ),
    ] {
        let out = run_weft(
            &["--unsafe", "-d", "bpf", "-e", script],
            Duration::from_secs(20),
        );
        assert_eq!(out.status, Some(1), "{script}");
        assert!(out.stderr.contains(message), "{script}\n{}", out.stderr);
    }
}

#[test]
fn system_runs_the_command_and_prints_its_output() {
    require_root!();
    let out = run_weft(
        &[
            "--unsafe",
            "-q",
            "-e",
            r#"BEGIN { system("echo hi %d; echo %s", 5, "two"); exit(); }"#,
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "hi 5\ntwo\n\n\n");
    // JSON: bpftrace's `syscall` record.
    let out = run_weft(
        &[
            "--unsafe",
            "-q",
            "-f",
            "json",
            "-e",
            r#"BEGIN { system("echo hi %d; echo two", 5); exit(); }"#,
        ],
        Duration::from_secs(20),
    );
    assert_eq!(
        out.stdout,
        "{\"type\": \"syscall\", \"data\": \"hi 5\\ntwo\\n\"}\n"
    );
}

/// Runs `-c "/bin/sh SCRIPT"` where the script runs the workload with
/// `steps` and writes its exit status, and `probe`'s block signals it.
fn signalled_exit_status(name: &str, probe: &str, steps: &str) -> String {
    let status_file = scratch(&format!("signal-{name}.status"));
    let script = scratch(&format!("signal-{name}.sh"));
    std::fs::write(
        &script,
        format!(
            "{} {steps}\necho $? > {}\n",
            workload().display(),
            status_file.display()
        ),
    )
    .unwrap();
    let cmd = format!("/bin/sh {}", script.display());
    let out = run_weft(
        &["--unsafe", "-q", "-c", &cmd, "-e", probe],
        Duration::from_secs(60),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let status = std::fs::read_to_string(&status_file).unwrap();
    let _ = std::fs::remove_file(&status_file);
    let _ = std::fs::remove_file(&script);
    status.trim().to_string()
}

#[test]
fn signal_reaches_the_traced_process_from_each_kind_of_probe() {
    require_root!();
    // The workload is a child of the `-c` shell; 138 = 128 + SIGUSR1, 137 = SIGKILL.
    let ours = r#"comm == "weftwl" && curtask->real_parent->tgid == cpid"#;
    assert_eq!(
        signalled_exit_status(
            "tracepoint",
            &format!(r#"tracepoint:syscalls:sys_enter_getppid /{ours}/ {{ signal("SIGUSR1"); }}"#),
            "getppid 100",
        ),
        "138"
    );
    let w = workload();
    assert_eq!(
        signalled_exit_status(
            "uprobe",
            &format!(
                r#"uprobe:{}:weft_workload_marker /{ours}/ {{ signal(9); }}"#,
                w.display()
            ),
            "call 100",
        ),
        "137"
    );
    assert_eq!(
        signalled_exit_status(
            "profile",
            &format!(r#"profile:hz:199 /{ours}/ {{ signal("KILL"); }}"#),
            "spin-cpu 5000",
        ),
        "137"
    );
}

#[test]
fn k_reports_failed_helpers_with_their_line() {
    require_root!();
    let cmd = format!("{} getppid 5", workload().display());
    // A one-key map: the second key's update fails (E2BIG).
    let out = common::run(
        Command::new(weft()).env("BPFTRACE_MAP_KEYS_MAX", "1").args([
            "-q",
            "-k",
            "-c",
            &cmd,
            "-e",
            "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @[nsecs] = 1; $x = *(uint64 *)8; }",
        ]),
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "stdin:1:55-63: WARNING: Map full; can't update element. Try increasing max_map_keys config"
        ) && out.stderr.contains("\nAdditional Info - helper: map_update_elem, retcode: -7\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(
            "weft: map_update_elem failed 4 times in all at stdin:1:55 (in tracepoint:syscalls:sys_enter_getppid)"
        ),
        "{}",
        out.stderr
    );
    // -k has the memory reads too, as bpftrace's current release (and -kk,
    // 0.17's flag for them, does the same).
    assert!(
        out.stderr
            .contains("WARNING: Bad address\nAdditional Info - helper: probe_read, retcode: -14\n"),
        "{}",
        out.stderr
    );
    let out = run_weft(
        &[
            "-q",
            "-kk",
            "-c",
            &cmd,
            "-e",
            "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { $x = *(uint64 *)8; }",
        ],
        Duration::from_secs(30),
    );
    assert!(
        out.stderr
            .contains("WARNING: Bad address\nAdditional Info - helper: probe_read, retcode: -14\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("weft: probe_read failed 5 times in all"),
        "{}",
        out.stderr
    );
    // Without either, nothing.
    let out = run_weft(
        &[
            "-q",
            "-c",
            &cmd,
            "-e",
            "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { $x = *(uint64 *)8; }",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.stderr, "");
}

/// With -k, a map read whose key is missing is reported as bpftrace reports
/// it (a failed map_lookup_elem, return code 0), with the read underlined;
/// the read still gives 0.
#[test]
fn k_reports_a_map_read_of_a_missing_key() {
    require_root!();
    let script = r#"i:ms:100 { @[1] = 1; printf("%d\n", @[2]); exit(); }"#;
    let out = run_weft(&["-k", "-e", script], Duration::from_secs(30));
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(out.stdout.starts_with("0\n"), "{}", out.stdout);
    let want = format!(
        "stdin:1:37-41: WARNING: Can't lookup map element because it does not exist.\n\
         Additional Info - helper: map_lookup_elem, retcode: 0\n{script}\n{}~~~~\n",
        " ".repeat(36)
    );
    assert!(out.stderr.contains(&want), "{}", out.stderr);
    // Without -k nothing is said.
    let out = run_weft(&["-e", script], Duration::from_secs(30));
    assert!(!out.stderr.contains("lookup"), "{}", out.stderr);
}

#[test]
fn include_dirs_and_files_and_a_script_from_stdin() {
    require_root!();
    let dir = scratch("include-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let header = dir.join("weft_answer.h");
    std::fs::write(&header, "#define WEFT_ANSWER 42\n").unwrap();
    let d = dir.display().to_string();
    let out = run_weft(
        &[
            "-q",
            "-I",
            &d,
            "-e",
            "#include <weft_answer.h>\nBEGIN { printf(\"%d\\n\", WEFT_ANSWER); exit(); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.stdout, "42\n\n\n", "{}", out.stderr);
    let h = header.display().to_string();
    let out = run_weft(
        &[
            "-q",
            "--include",
            &h,
            "-e",
            "BEGIN { printf(\"%d\\n\", WEFT_ANSWER); exit(); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.stdout, "42\n\n\n", "{}", out.stderr);
    // `-`: the script is read from stdin; its diagnostics say `stdin`.
    let mut child = Command::new(weft())
        .args(["-q", "-", "9"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"BEGIN { printf(\"from stdin %d\\n\", $1); exit(); }")
        .unwrap();
    let (status, timed_out) = wait_with_timeout(&mut child, Duration::from_secs(20));
    assert!(!timed_out);
    assert_eq!(status, Some(0));
    let mut text = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut text).unwrap();
    assert_eq!(text, "from stdin 9\n\n\n");
    let _ = std::fs::remove_dir_all(&dir);
}
