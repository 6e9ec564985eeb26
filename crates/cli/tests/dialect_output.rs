//! Kernel tests of the output bugs bpftrace's runtime suite found (issue
//! 14's numbered list), each on the workload with the exact output that
//! bpftrace's current release prints:
//!
//! - 4: booleans (literals, comparisons, `!`, `(bool)` casts) print as
//!   `true`/`false` as map keys, map values and tuple fields, in text and
//!   JSON; `printf("%d")` of one is 1 or 0.
//! - A ternary choosing between tuples (which overflowed weft's own stack)
//!   gives the chosen tuple, strings widened to the longer side.

mod common;

use common::trace_workload;

const GETPPID: &str = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/";

#[test]
fn booleans_print_as_true_and_false() {
    require_root!();
    let script = format!(
        r#"{GETPPID} {{ @k[pid == cpid] = count(); @v = !(pid == cpid); $n = 3; print(((bool)$n, 2 > 3, 7)); printf("%d\n", true); }}"#
    );
    let out = trace_workload(&script, "getppid 2", &[]);
    let once = "(true, false, 7)\n1\n";
    assert_eq!(
        out.stdout,
        format!("{once}{once}\n\n@k[true]: 2\n@v: false\n"),
        "{}",
        out.stderr
    );
    let out = trace_workload(&script, "getppid 1", &["-f", "json"]);
    assert_eq!(
        out.stdout,
        r#"{"type": "value", "data": [true,false,7]}
{"type": "printf", "data": "1\n"}
{"type": "map", "data": {"@k": {"true": 1}}}
{"type": "map", "data": {"@v": false}}
"#,
        "{}",
        out.stderr
    );
}

#[test]
fn a_ternary_chooses_between_tuples() {
    require_root!();
    let script = format!(
        r#"{GETPPID} {{ $a = pid == cpid ? ("hellolongstr", "a") : ("b", "hellolongstr"); print($a); $b = pid != cpid ? ("x", 1) : ("yy", -2); print($b); }}"#
    );
    let out = trace_workload(&script, "getppid 2", &[]);
    let once = "(hellolongstr, a)\n(yy, -2)\n";
    assert_eq!(out.stdout, format!("{once}{once}\n\n"), "{}", out.stderr);
}
