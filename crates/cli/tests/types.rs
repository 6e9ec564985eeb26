//! Kernel tests of types as bpftrace's current dialect has them (issue 14):
//! enum values printed as their enumerators' names (in map keys and
//! values, tuples, `print()` and printf's `%s`; as numbers in JSON values
//! and after arithmetic); tuples packed as bpftrace packs them (integers at
//! their width, literals the smallest signed type holding them), which
//! `sizeof` shows.

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

#[test]
fn tuples_pack_their_integers_and_sizeof_shows_it() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            r#"struct Foo { int x; char c; } BEGIN {
                $a = ((int8)1, (int16)1, (int32)1); $b = ((int32)1, (int16)1, (int8)1);
                $c = ((int8)-100, (int8)100, "abcdef", 3, (int32)1, (int64)-10, (int8)10, (int16)-555, "abc");
                $x = 1;
                printf("%d %d %d %d %d %d %d\n", sizeof($a), sizeof($b), sizeof($c), sizeof($x), sizeof(1 == 1), sizeof(struct Foo), sizeof((int8[8])12345));
                print($c); printf("%d %d %s %d\n", $c.0, $c.7, $c.2, $c.3);
                $v = (-1, 200, 70000); print($v); $v = (5000000000, -2, 3); print($v);
                @k[(int16)-1, ((int32)-2, 3)] = 10; @k[5, (6, 7)] = 11; $n = ((int8)-4, ((int16)-5, -6)); @k[$n] = 12;
                @t = $c; exit(); }"#,
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            "8 8 32 1 1 8 8",
            "(-100, 100, abcdef, 3, 1, -10, 10, -555, abc)",
            "-100 -555 abcdef 3",
            // Read where it still holds its first value, from the wider storage.
            "(-1, 200, 70000)",
            "(5000000000, -2, 3)",
            "@k[-4, (-5, -6)]: 12",
            "@k[-1, (-2, 3)]: 10",
            "@k[5, (6, 7)]: 11",
            "@t: (-100, 100, abcdef, 3, 1, -10, 10, -555, abc)",
        ],
    );
}
