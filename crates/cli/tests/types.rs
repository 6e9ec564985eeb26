//! Kernel tests of types as bpftrace's current dialect has them (issue 14):
//! enum values printed as their enumerators' names (in map keys and
//! values, tuples, `print()` and printf's `%s`; as numbers in JSON values
//! and after arithmetic).

mod common;

use std::time::Duration;

use common::{expect_lines, run_weft};

#[test]
fn enum_values_print_as_their_names() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            r#"enum Foo { ONE = 1, TWO = 2, OTHER = 99999 }; BEGIN {
                $x = 100; $one = ONE;
                printf("%d %s %d %s %-5s| %s %s\n", ONE, $one, OTHER, OTHER, TWO, (enum Foo)2, (enum Foo)$x);
                @k[ONE, TWO] = 11; @v = OTHER; @t = (ONE, (enum Foo)$x); @sum[ONE + 1] = TWO - 1;
                print((ONE, TWO)); exit(); }"#,
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            "1 ONE 99999 OTHER TWO  | TWO 100",
            "(ONE, TWO)",
            "@k[ONE, TWO]: 11",
            "@v: OTHER",
            "@t: (ONE, 100)",
            "@sum[2]: 1",
        ],
    );
}

#[test]
fn enum_values_are_numbers_in_json_except_through_printf() {
    require_root!();
    let out = run_weft(
        &[
            "-q",
            "-f",
            "json",
            "-e",
            r#"enum { FOO = 333 }; BEGIN { $f = FOO; print($f); printf("%s %d\n", FOO, FOO); @m[FOO] = FOO; exit(); }"#,
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            r#"{"type": "value", "data": 333}"#,
            r#"{"type": "printf", "data": "FOO 333\n"}"#,
            // Keys are text in bpftrace's JSON, so a key shows the name.
            r#"{"type": "map", "data": {"@m": {"FOO": 333}}}"#,
        ],
    );
}
