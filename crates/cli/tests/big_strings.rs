//! Strings longer than the BPF stack holds (bpftrace's current release
//! reads up to `max_strlen` bytes, 1024 by default; `BPFTRACE_MAX_STRLEN`
//! takes more). Such a string, and any tuple or key that holds one, lives
//! in the program's per-CPU scratch buffer; these tests run weft on the
//! workload opening a 5,000-byte path and check every use of it exactly:
//! - a variable, a map key, a map value read back into another map,
//!   printf's `%s`, `strlen()`, `==` between two copies, `print()` of a
//!   nested tuple, `strncmp()` past the unrolled length, both with the
//!   config key and with the environment variable;
//! - a string of the longest `max_strlen` (16 KiB) in a map key and value;
//! - at the default `max_strlen` (1024, bpftrace's current release), paths
//!   of 200, 1,000 and 1,023 characters print whole in printf, map keys and
//!   JSON; longer ones are cut to 1,023 characters without the trailer, as
//!   that release prints them (its read keeps the NUL from 1024 up);
//! - a printf record takes the ring buffer's room for its string's length,
//!   not for its 1 KiB buffer: exactly as many records fit as the sum says;
//! - a map loop's callback keeps its long strings in the scratch buffer
//!   after the caller's.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{run, run_weft, trace_workload, workload};

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

/// A path of `n` characters whose directory does not exist: openat fails
/// (ENOENT or ENAMETOOLONG) after the tracepoint has seen it, creating nothing.
fn missing_path(n: usize, fill: char) -> String {
    let dir = "/weft-no-such-dir/";
    format!("{dir}{}", fill.to_string().repeat(n - dir.len()))
}

#[test]
fn the_default_max_strlen_keeps_paths_up_to_1023_characters() {
    require_root!();
    // One path per length, opened as many times as its rank, so the map
    // prints them in that order (by count).
    let lengths = [200, 1000, 1023, 1024, 1100];
    let paths: Vec<String> = lengths
        .iter()
        .zip(['a', 'b', 'c', 'd', 'e'])
        .map(|(&n, fill)| missing_path(n, fill))
        .collect();
    let steps: Vec<String> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| format!("openat {p} {}", i + 1))
        .collect();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_openat /pid == cpid && comm == \"weftwl\"/ { \
           printf(\"%s|%s|%d\\n\", str(args->filename), comm, 7); @[str(args->filename)] = count(); }",
        &steps.join(" "),
        &[],
    );
    // Past 1,023 characters the string is cut there, with no `..`.
    let shown: Vec<&str> = paths.iter().map(|p| &p[..p.len().min(1023)]).collect();
    let mut expected = Vec::new();
    for (i, s) in shown.iter().enumerate() {
        for _ in 0..=i {
            expected.push(format!("{s}|weftwl|7"));
        }
    }
    for (i, s) in shown.iter().enumerate() {
        expected.push(format!("@[{s}]: {}", i + 1));
    }
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines, expected, "stderr:\n{}", out.stderr);
}

#[test]
fn a_long_path_prints_whole_in_json() {
    require_root!();
    let path = missing_path(200, 'j');
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_openat /pid == cpid && comm == \"weftwl\"/ { \
           printf(\"%s\\n\", str(args->filename)); print(str(args->filename)); @[str(args->filename)] = count(); }",
        &format!("openat {path} 1"),
        &["-f", "json"],
    );
    assert_eq!(
        out.stdout,
        format!(
            "{{\"type\": \"printf\", \"data\": \"{path}\\n\"}}\n\
             {{\"type\": \"value\", \"data\": \"{path}\"}}\n\
             {{\"type\": \"map\", \"data\": {{\"@\": {{\"{path}\": 1}}}}}}\n"
        ),
        "stderr:\n{}",
        out.stderr
    );
}

#[test]
fn a_printf_record_takes_the_room_of_its_string_not_of_its_buffer() {
    require_root!();
    // BEGIN runs before user space reads the ring buffer, so what fits in
    // it is exact: a 4 KiB buffer holds 170 records of 24 bytes (the
    // kernel's 8-byte header, the printf header, the string's length, and
    // its one byte, a NUL: reading address 0 fails and gives ""), where a
    // 1 KiB buffer per record would fit 3. The other 30 and exit()'s record
    // are counted lost.
    let out = run_weft(
        &[
            "-e",
            "config = { perf_rb_pages = 1 } \
             BEGIN { $z = 0; $i = 0; while ($i < 200) { printf(\"<%s>\\n\", str($z)); $i++; } exit(); }",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(out.stdout.matches("<>\n").count(), 170, "{}", out.stdout);
    assert!(out.stderr.contains("Lost 31 events"), "{}", out.stderr);
}

#[test]
fn strings_sent_at_their_length_keep_the_trailer_in_every_path() {
    require_root!();
    // `max_strlen` = 100: 100 characters fill the buffer (no NUL) and print
    // with `..`; 60 fit. `str()` read straight into the record, a
    // variable's copy, and a map key read back in a map loop all send the
    // same.
    let (long, short) = (missing_path(150, 'L'), missing_path(60, 's'));
    let out = trace_workload(
        "config = { max_strlen = 100 } \
         tracepoint:syscalls:sys_enter_openat /pid == cpid && comm == \"weftwl\"/ { \
           $s = str(args->filename); printf(\"%s|%s\\n\", str(args->filename), $s); @[$s] = count(); } \
         END { for ($kv : @) { printf(\"loop %s %d\\n\", $kv.0, $kv.1); } clear(@); }",
        &format!("openat {long} 1 openat {short} 1"),
        &[],
    );
    let cut = format!("{}..", &long[..100]);
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    let mut looped: Vec<&str> = lines[2..].to_vec();
    looped.sort();
    assert_eq!(
        lines[..2],
        [format!("{cut}|{cut}"), format!("{short}|{short}")],
        "stderr:\n{}",
        out.stderr
    );
    assert_eq!(looped, [format!("loop {cut} 1"), format!("loop {short} 1")]);
}

#[test]
fn a_map_loop_keeps_long_strings_in_the_scratch_buffer_after_the_callers() {
    require_root!();
    // The callback's own 1 KiB strings (a key, a printf record) go after
    // the caller's `$a` in the same buffer: `$a` is whole after the loop.
    let path = missing_path(300, 'm');
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_openat /pid == cpid && comm == \"weftwl\"/ { \
           $a = str(args->filename); @m[1] = 1; @m[2] = 2; \
           for ($kv : @m) { @x[str(args->filename), $kv.0] = count(); \
             printf(\"in %d %s\\n\", $kv.0, str(args->filename)); } \
           printf(\"after %s\\n\", $a); clear(@m); }",
        &format!("openat {path} 1"),
        &[],
    );
    let mut lines: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    lines.sort();
    let p = path.as_str();
    assert_eq!(
        lines,
        [
            format!("@x[{p}, 1]: 1"),
            format!("@x[{p}, 2]: 1"),
            format!("after {p}"),
            format!("in 1 {p}"),
            format!("in 2 {p}"),
        ],
        "stderr:\n{}",
        out.stderr
    );
}
