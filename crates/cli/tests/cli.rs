//! The command line without the kernel: help, argument errors, dumps.

mod common;

use std::time::Duration;

use common::run_weft;

#[test]
fn help_and_version() {
    let out = run_weft(&["--help"], Duration::from_secs(10));
    assert_eq!(out.status, Some(0));
    assert!(
        out.stdout
            .starts_with("USAGE:\n    weft [options] filename [arg ...]\n"),
        "{}",
        out.stdout
    );
    // Streams are weft's own: the help says where their reference is.
    assert!(out.stdout.contains("docs/streams.md"), "{}", out.stdout);
    let out = run_weft(&["-V"], Duration::from_secs(10));
    assert_eq!(out.stdout, format!("weft {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn bad_arguments_exit_2_with_one_sentence_and_the_usage() {
    let out = run_weft(&["--bogus"], Duration::from_secs(10));
    assert_eq!(out.status, Some(2));
    assert!(
        out.stderr
            .starts_with("ERROR: unknown option `--bogus`\n\nUSAGE:\n    weft [options]"),
        "{}",
        out.stderr
    );
    let out = run_weft(&[], Duration::from_secs(10));
    assert_eq!(out.status, Some(2));
    let out = run_weft(&["/nonexistent/script.bt"], Duration::from_secs(10));
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr.starts_with(
            "ERROR: failed to open file '/nonexistent/script.bt': No such file or directory\n"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn syntax_errors_render_with_file_line_and_caret() {
    let dir = std::env::temp_dir().join(format!("weft-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("bad.bt");
    std::fs::write(&script, "BEGIN {\n  @x = (1 + ;\n}\n").unwrap();
    let out = run_weft(&[script.to_str().unwrap()], Duration::from_secs(10));
    assert_eq!(out.status, Some(1));
    let first = out.stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("{}:2:", script.display())),
        "{}",
        out.stderr
    );
    // bpftrace's form: the place with the span's end column, the line as
    // written and a `~` under the span.
    assert!(
        first.starts_with(&format!("{}:2:13-14: ERROR: ", script.display())),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("\n  @x = (1 + ;\n            ~ "),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("CODE: E0022"), "{}", out.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn dumps_every_stage() {
    let out = run_weft(
        &["-d", "all", "-e", "BEGIN { @x[comm] = count(); exit(); }"],
        Duration::from_secs(10),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("Program\n  Probe\n    AttachPoint BEGIN"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("map @x[string[16]]: count_t\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("BEGIN:\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains("call bpf_get_current_comm#16"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("call bpf_ringbuf_reserve#131"),
        "{}",
        out.stdout
    );
}

/// `-l` for software and hardware events prints bpftrace's
/// `PROVIDER:NAME:` lines, sorted (captured from 0.17: `bpftrace -l
/// 'software:cpu-clock'` prints `software:cpu-clock:`); profile and
/// interval list their units, as bpftrace's current release does.
#[test]
fn lists_perf_events_and_timer_units() {
    let out = run_weft(&["-l", "software:page*"], Duration::from_secs(10));
    assert_eq!(out.stdout, "software:page-faults:\n");
    assert_eq!(out.status, Some(0));
    let out = run_weft(&["-l", "hardware:cache-*"], Duration::from_secs(10));
    assert_eq!(
        out.stdout,
        "hardware:cache-misses:\nhardware:cache-references:\n"
    );
    for provider in ["profile", "interval"] {
        let out = run_weft(&["-l", &format!("{provider}:*")], Duration::from_secs(10));
        assert_eq!(out.status, Some(0), "{}", out.stderr);
        assert_eq!(
            out.stdout,
            format!("{provider}:hz:\n{provider}:ms:\n{provider}:s:\n{provider}:us:\n")
        );
    }
}
