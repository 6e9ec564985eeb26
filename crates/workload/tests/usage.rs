//! `weft-workload` explains itself: without steps it prints its usage on
//! stderr and fails, `--help` prints it on stdout, an unknown step names
//! where the list is.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the workload with `args`, killed after 10 s.
fn workload(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft-workload"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn weft-workload");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn no_arguments_print_the_usage_and_fail() {
    let out = workload(&[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("usage: weft-workload STEP [STEP ...]\n"),
        "{stderr}"
    );
    // Every step is listed.
    for step in [
        "getppid N",
        "openat PATH N",
        "write SIZE N",
        "read SIZE N",
        "nanosleep NS N",
        "spin MS",
        "call N",
        "strlen N",
        "sleep MS",
        "touch-pages N",
        "block-read",
        "dio-write PATH SIZE N",
    ] {
        assert!(stderr.contains(&format!("\n  {step} ")), "{step}: {stderr}");
    }
    assert!(out.stdout.is_empty());
}

#[test]
fn help_prints_the_usage_on_stdout() {
    let out = workload(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("usage: weft-workload"));
}

#[test]
fn an_unknown_step_points_at_the_list() {
    let out = workload(&["getppid", "1", "frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "weft-workload: unknown step `frobnicate` (`weft-workload --help` lists the steps)\n"
    );
}
