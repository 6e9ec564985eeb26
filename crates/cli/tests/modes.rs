//! bpftrace's run modes and the flags around them: `--mode bench` with
//! `bench:NAME` probes, `self:signal:SIGUSR1`, `--dry-run`,
//! `--probe-filter`, `--output`, `--no-warnings`, the usage text after a
//! bad flag, and `-l` of a script and of C types.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{run_weft, scratch, trace_workload, wait_with_timeout, weft};

/// The benchmark table's rows as (name, mean ns, iterations), after
/// checking its header and rule are bpftrace's.
fn bench_rows(stdout: &str) -> Vec<(String, u64, u64)> {
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            format!(
                "Benchmark{}Time(ns){}Iterations",
                " ".repeat(32),
                " ".repeat(7)
            )
            .as_str()
        ),
        "{stdout}"
    );
    assert_eq!(lines.next(), Some("-".repeat(66).as_str()), "{stdout}");
    lines
        .take_while(|l| l.split_whitespace().count() == 3)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 3, "{l}");
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn bench_mode_times_each_bench_probe_in_order() {
    require_root!();
    let out = run_weft(
        &[
            "--mode",
            "bench",
            "-e",
            "bench:a { @a = count(); } bench:second { @b = count(); } END { printf(\"end\\n\"); }",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let rows = bench_rows(&out.stdout);
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, ["a", "second"]);
    for (name, mean, iters) in &rows {
        // Rounds grow until one lasts a millisecond.
        assert!(mean * iters >= 1_000_000, "{name}: {mean} ns x {iters}");
    }
    // Every run of the timed rounds counted: the last round's and the
    // shorter ones before it.
    let count = |map: &str| -> u64 {
        let line = out
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{map}: ")))
            .unwrap_or_else(|| panic!("{map} missing:\n{}", out.stdout));
        line[map.len() + 2..].parse().unwrap()
    };
    assert!(count("@a") > rows[0].2, "{}", out.stdout);
    assert!(count("@b") > rows[1].2, "{}", out.stdout);
    assert!(out.stdout.contains("\nend\n"), "{}", out.stdout);

    let out = run_weft(
        &[
            "-q",
            "-f",
            "json",
            "--bench",
            "-e",
            "bench:x { @x = count(); }",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let first: serde_json::Value =
        serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "benchmark_result");
    assert!(first["data"]["x"]["average"].as_u64().unwrap() > 0);
    assert!(first["data"]["x"]["iters"].as_u64().unwrap() > 0);
}

#[test]
fn bench_probes_are_left_out_without_bench_mode() {
    require_root!();
    let out = run_weft(
        &["-e", "bench:a { @a = count(); } BEGIN { @b = 1; exit(); }"],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "\n\n@b: 1\n");
}

#[test]
fn self_signal_probes_run_in_order_on_each_sigusr1() {
    require_root!();
    let mut child = Command::new(weft())
        .args([
            "-e",
            "self:signal:SIGUSR1 { @n++; printf(\"first\"); } self:signal:SIGUSR1 { printf(\" second\\n\"); if (@n == 2) { exit(); } }",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    // Attached: the handler is in place once the attached line is out.
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let started = Instant::now();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains("Attached") {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "never attached"
        );
        if stderr.read(&mut byte).unwrap() == 0 {
            break;
        }
        seen.push(byte[0]);
    }
    for _ in 0..2 {
        let kill = Command::new("kill").args(["-USR1", &pid]).status().unwrap();
        assert!(kill.success());
        std::thread::sleep(Duration::from_millis(300));
    }
    let (status, timed_out) = wait_with_timeout(&mut child, Duration::from_secs(10));
    assert!(!timed_out);
    assert_eq!(status, Some(0));
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(stdout, "first second\nfirst second\n\n\n@n: 2\n");
}

#[test]
fn self_takes_sigusr1_only() {
    let out = run_weft(
        &["-d", "bpf", "-e", "self:signal:SIGINT { exit(); }"],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(1));
    assert!(out.stderr.contains("CODE: E0482"), "{}", out.stderr);
    let out = run_weft(&["-l", "self:*"], Duration::from_secs(20));
    assert_eq!(out.stdout, "self:signal:SIGUSR1\n");
}

#[test]
fn dry_run_attaches_but_runs_nothing() {
    require_root!();
    let out = run_weft(
        &[
            "--dry-run",
            "-e",
            "BEGIN { printf(\"hello\\n\"); @ = 0; } tracepoint:syscalls:sys_enter_getppid { @n = count(); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "");
    // A probe the kernel does not have still fails the dry run.
    let out = run_weft(
        &["--dry-run", "-e", "uprobe:/bin/sh:no_such_function_xyz { }"],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(1));
}

#[test]
fn probe_filter_keeps_the_probes_it_matches() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /cpid == pid/ { @ppid = count(); } \
         tracepoint:syscalls:sys_enter_getpid /cpid == pid/ { @pid = count(); } \
         END { printf(\"end\\n\"); }",
        "getppid 7 getpid 3",
        &["--probe-filter", "getppid$"],
    );
    assert_eq!(out.stdout, "end\n\n\n@ppid: 7\n");
}

#[test]
fn probe_filter_that_matches_nothing_or_is_no_regex() {
    let out = run_weft(
        &[
            "--probe-filter",
            "nonexistent_probe_xyz",
            "-d",
            "bpf",
            "-e",
            "interval:ms:100 { exit(); } BEGIN { }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr.contains("ERROR: No probes to attach"),
        "{}",
        out.stderr
    );
    let out = run_weft(
        &[
            "--probe-filter",
            "[invalid",
            "-e",
            "interval:ms:100 { exit(); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr
            .contains("Invalid --probe-filter regex `[invalid`"),
        "{}",
        out.stderr
    );
}

#[test]
fn output_goes_to_the_file_named() {
    require_root!();
    for flag in ["--output", "-o"] {
        let path = scratch(&format!("output{flag}"));
        let path_text = path.display().to_string();
        let out = run_weft(
            &[
                flag,
                &path_text,
                "-e",
                "BEGIN { printf(\"in the file\\n\"); exit(); }",
            ],
            Duration::from_secs(20),
        );
        assert_eq!(out.status, Some(0), "{}", out.stderr);
        assert_eq!(out.stdout, "");
        // The text format's end-of-run lines follow, as on stdout.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "in the file\n\n\n");
        std::fs::remove_file(&path).unwrap();
    }
    let path = scratch("output-equals");
    let out = run_weft(
        &[
            &format!("--output={}", path.display()),
            "-e",
            "BEGIN { printf(\"x\\n\"); exit(); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x\n\n\n");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn no_warnings_silences_warnings_only() {
    let args = |quiet: bool| {
        let mut cmd = Command::new(weft());
        cmd.env("BPFTRACE_MISSING_PROBES", "warn").args([
            "-d",
            "bpf",
            "-e",
            "tracepoint:syscalls:no_such_tracepoint_xyz { } interval:s:1 { exit(); }",
        ]);
        if quiet {
            cmd.arg("--no-warnings");
        }
        common::run(&mut cmd, Duration::from_secs(20))
    };
    let loud = args(false);
    assert_eq!(loud.status, Some(0), "{}", loud.stderr);
    assert!(loud.stderr.contains("WARNING: "), "{}", loud.stderr);
    let quiet = args(true);
    assert_eq!(quiet.status, Some(0), "{}", quiet.stderr);
    assert!(!quiet.stderr.contains("WARNING"), "{}", quiet.stderr);
    assert_eq!(loud.stdout, quiet.stdout);
}

#[test]
fn a_bad_flag_prints_the_usage() {
    let out = run_weft(
        &["--no-such-flag", "-e", "BEGIN { }"],
        Duration::from_secs(10),
    );
    assert_eq!(out.status, Some(2));
    assert!(
        out.stderr
            .starts_with("ERROR: unknown option `--no-such-flag`\n\nUSAGE:\n"),
        "{}",
        out.stderr
    );
    // Clustered short flags: -lv is -l -v; an unknown letter is a bad flag.
    let out = run_weft(&["-lz"], Duration::from_secs(10));
    assert_eq!(out.status, Some(2));
    assert!(out.stderr.contains("USAGE:"), "{}", out.stderr);
}

#[test]
fn list_of_a_script_names_what_it_attaches() {
    let path = scratch("list.bt");
    std::fs::write(
        &path,
        "BEGIN { } interval:ms:100 { } profile:hz:99 { } software:cpu-clock:1e6 { } END { }\n",
    )
    .unwrap();
    let out = run_weft(
        &["-l", &path.display().to_string()],
        Duration::from_secs(20),
    );
    std::fs::remove_file(&path).unwrap();
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "interval:ms:\nprofile:hz:\nsoftware:cpu-clock:\n"
    );
    let out = run_weft(&["-l", "-e", "interval:s:1 { }"], Duration::from_secs(20));
    assert_eq!(out.stdout, "interval:s:\n");
}

#[test]
fn list_of_kernel_struct_types() {
    require_root!();
    let out = run_weft(&["-l", "struct list_head"], Duration::from_secs(30));
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "struct list_head\n");
    let out = run_weft(&["-lv", "struct list_head"], Duration::from_secs(30));
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "vmlinux: struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};\n"
    );
}
