//! Strings longer than the BPF stack holds (bpftrace's current release
//! reads up to `max_strlen` bytes, 1024 by default; `BPFTRACE_MAX_STRLEN`
//! takes more). Such a string, and any tuple or key that holds one, lives
//! in the program's per-CPU scratch buffer; these tests run weft on the
//! workload opening a 5,000-byte path and check every use of it exactly:
//! - a variable, a map key, a map value read back into another map,
//!   printf's `%s`, `strlen()`, `==` between two copies, `print()` of a
//!   nested tuple, `strncmp()` past the unrolled length, both with the
//!   config key and with the environment variable;
//! - a string of the longest `max_strlen` (16 KiB) in a map key and value.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{run, trace_workload, workload};

/// The workload's long path: `/` and 5,000 `X`s (openat fails with
/// ENAMETOOLONG after the tracepoint has seen it).
fn long_path() -> String {
    format!("/{}", "X".repeat(5000))
}

/// `stdout`'s lines but the blank ones, with the long path written `<PATH>`.
/// The scripts look at the workload's own openat calls only (its comm),
/// not the dynamic loader's before them: with 10 KiB records, the loader's
/// search of a long `LD_LIBRARY_PATH` could fill the ring buffer.
fn path_lines(stdout: &str) -> Vec<String> {
    let path = long_path();
    stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.replace(&path, "<PATH>"))
        .collect()
}

const SCRIPT: &str = "tracepoint:syscalls:sys_enter_openat /pid == cpid && comm == \"weftwl\"/ { \
    $s = str(args->filename); @[$s] = count(); @v = $s; @w = @v; \
    printf(\"%s|%d|%d|%d|%d\\n\", $s, strlen($s), $s == @w, strncmp($s, @w, 4000), strncmp($s, \"/XX\", 4)); \
    print((1, (2, $s))); }";

#[test]
fn a_5000_byte_path_in_every_use() {
    require_root!();
    let steps = format!("openat {} 2", long_path());
    let script = format!("config = {{ max_strlen = 9999 }} {SCRIPT}");
    let out = trace_workload(&script, &steps, &[]);
    let line = "<PATH>|5001|1|0|1";
    let tuple = "(1, (2, <PATH>))";
    assert_eq!(
        path_lines(&out.stdout),
        [
            line,
            tuple,
            line,
            tuple,
            "@[<PATH>]: 2",
            "@v: <PATH>",
            "@w: <PATH>"
        ],
        "stderr:\n{}",
        out.stderr
    );
}

#[test]
fn the_environment_sets_a_long_max_strlen() {
    require_root!();
    let cmd = format!("{} openat {} 1", workload().display(), long_path());
    let out = run(
        Command::new(common::weft())
            .args(["-q", "-c", &cmd, "-e", SCRIPT])
            .env("BPFTRACE_MAX_STRLEN", "9999"),
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(
        path_lines(&out.stdout),
        [
            "<PATH>|5001|1|0|1",
            "(1, (2, <PATH>))",
            "@[<PATH>]: 1",
            "@v: <PATH>",
            "@w: <PATH>"
        ]
    );
}

#[test]
fn the_longest_max_strlen_loads() {
    require_root!();
    let steps = format!("openat {} 1", long_path());
    let out = trace_workload(
        "config = { max_strlen = 16384 } tracepoint:syscalls:sys_enter_openat /pid == cpid && comm == \"weftwl\"/ { \
           @[str(args->filename)] = str(args->filename); }",
        &steps,
        &[],
    );
    assert_eq!(path_lines(&out.stdout), ["@[<PATH>]: <PATH>"]);
}
