//! Strings as bpftrace's current release prints them:
//! - a string `str()` cut at `max_strlen` prints with the truncation trailer
//!   (`..`, or `str_trunc_trailer`/`BPFTRACE_STR_TRUNC_TRAILER`), in printf,
//!   map keys and JSON; one that fits prints whole; `str(p, n)` reads `n`
//!   bytes with its NUL and is never marked (the workload opens `/dev/null`);
//! - a variable keeps the widest string it was given: each `print()` shows
//!   the tuple it holds then, nested too, and a map key may hold a tuple
//!   beside a string.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{run, run_weft, trace_workload, workload};

const TRUNCATED: &str = "tracepoint:syscalls:sys_enter_openat /pid == cpid && comm == \"weftwl\"/ { \
    printf(\"%s|%s|%s\\n\", str(args->filename), str(args->filename, 4), str(args->filename, 40)); \
    @[str(args->filename)] = count(); }";

#[test]
fn a_cut_string_prints_with_the_trailer() {
    require_root!();
    let out = trace_workload(
        &format!("config = {{ max_strlen = 6 }} {TRUNCATED}"),
        "openat /dev/null 2",
        &[],
    );
    assert_eq!(
        out.stdout,
        "/dev/n..|/de|/dev/n..\n/dev/n..|/de|/dev/n..\n\n\n@[/dev/n..]: 2\n"
    );
    // Nine characters fill a 9-byte string (no NUL): cut, as bpftrace has
    // it; in 10 bytes they fit.
    for (max, shown) in [(9, "/dev/null.."), (10, "/dev/null")] {
        let out = trace_workload(
            &format!(
                "config = {{ max_strlen = {max} }} tracepoint:syscalls:sys_enter_openat \
                 /pid == cpid && comm == \"weftwl\"/ {{ print(str(args->filename)); }}"
            ),
            "openat /dev/null 1",
            &[],
        );
        // The blank lines are those before the maps at exit.
        assert_eq!(out.stdout, format!("{shown}\n\n\n"), "max_strlen {max}");
    }
}

#[test]
fn the_trailer_follows_the_environment_and_json() {
    require_root!();
    let cmd = format!("{} openat /dev/null 1", workload().display());
    let out = run(
        Command::new(common::weft())
            .args(["-q", "-f", "json", "-c", &cmd, "-e", TRUNCATED])
            .env("BPFTRACE_MAX_STRLEN", "6")
            .env("BPFTRACE_STR_TRUNC_TRAILER", "_xxx"),
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(
        out.stdout,
        "{\"type\": \"printf\", \"data\": \"/dev/n_xxx|/de|/dev/n_xxx\\n\"}\n\
         {\"type\": \"map\", \"data\": {\"@\": {\"/dev/n_xxx\": 1}}}\n"
    );
}

#[test]
fn variables_and_keys_keep_the_widest_string() {
    require_root!();
    let out = run_weft(
        &[
            "-q",
            "-e",
            "BEGIN { $a = (\"hi\", 1); print($a); $a = (\"hellolongstr\", 2); print($a); \
               $a = (\"by\", 3); print($a); \
               $b = (\"hi\", (\"hellolongstr\", 2)); print($b); \
               $b = (\"hellolongstr\", (\"hi\", 5)); print($b); \
               @[\"hi\", (\"hellolongstr\", 2)] = 1; @[\"hellolongstr\", (\"hi\", 5)] = 2; }",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(
        out.stdout,
        "(hi, 1)\n(hellolongstr, 2)\n(by, 3)\n(hi, (hellolongstr, 2))\n(hellolongstr, (hi, 5))\n\n\n\
         @[hi, (hellolongstr, 2)]: 1\n@[hellolongstr, (hi, 5)]: 2\n"
    );
}

#[test]
fn string_bytes_and_strings_behind_pointers_to_pointers() {
    require_root!();
    // `s[i]` is a char; a run-time index past the buffer reads 0.
    let out = run_weft(
        &[
            "-q",
            "-e",
            "BEGIN { $a = \"foo\"; $i = (uint64)10; $j = (uint64)1; \
               printf(\"%c%c|%d|%d\\n\", $a[0], $a[$j], $a[$i], $a[3]); }",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(out.stdout, "fo|0|0\n\n\n");
    // `args.argv` is a `const char *const *`: its elements are strings,
    // cut by a literal or a run-time length (bytes with the NUL).
    let out = run_weft(
        &[
            "-q",
            "-c",
            "/bin/true zztest",
            "-e",
            "tracepoint:syscalls:sys_enter_execve /pid == cpid/ { $n = (uint16)5; \
               printf(\"%s|%s|%s|%s\\n\", str(args.argv[0]), str(args.argv[1], 5), \
                 str(args->argv[1], $n), str(args.argv[1])); }",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
    assert_eq!(out.stdout, "/bin/true|zzte|zzte|zztest\n\n\n");
}
