//! Kernel tests of arrays, records and nested tuples as bpftrace's current
//! dialect has them (issue 14): array members of a struct read through a
//! pointer (one element, or the whole array as a map key or value), arrays
//! indexed by a constant or a variable, compared, cast from and to
//! integers and strings; records `(a = 1, b = "x")` and tuples in tuples
//! stored and printed; structs held by value (`*p`), as values, keys and
//! tuple fields. Values come from the workload's own write buffers
//! or from literals, so every one is known exactly.

mod common;

use std::time::Duration;

use common::{expect_lines, run_weft, trace_workload};

#[test]
fn array_members_of_the_workloads_buffer() {
    require_root!();
    // The workload writes buffers of `x` (0x78): each byte 120, each
    // uint16 30840. `uint8_t` arrays are arrays (only `char` ones are strings).
    let out = trace_workload(
        "struct W { uint8_t b[4]; uint16_t h[2][2]; } tracepoint:syscalls:sys_enter_write /pid == cpid/ { $w = (struct W *)args.buf; @k[$w.b] = count(); $i = 1; @h[$w.h[1][$i], $w.b[2]] = count(); @v = $w.h; $c = $w.h[0]; @same = count(); if ($w.b == $w.b && $c[1] == 30840) { @eq = count(); } @int = (uint32)$w.b; }",
        "write 16 4",
        &[],
    );
    expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            "@k[[120,120,120,120]]: 4",
            "@h[30840, 120]: 4",
            "@v: [[30840,30840],[30840,30840]]",
            "@same: 4",
            "@eq: 4",
            "@int: 2021161080",
        ],
    );
}

#[test]
fn arrays_cast_indexed_and_stored_in_maps() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            r#"struct A { int32_t x[4]; } BEGIN {
                $b = (int8[8])0x0102030405060708; $i = 6;
                printf("%d %d %x\n", $b[0], $b[$i], ((int8[])12345)[0]);
                $s = (int8[])"abcdefghijklmno"; @s = $s;
                $a = (struct A *)&$s; @x = $a.x; @m[$a.x, 7] = $a.x[3];
                @t = (1, (int16[2])(int32)0x00020001);
                if ($a.x != ((struct A *)&$s).x) { printf("differ\n"); } else { printf("equal\n"); }
                exit(); }"#,
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            "8 2 39",
            "equal",
            "@s: [97,98,99,100,101,102,103,104,105,106,107,108,109,110,111,0]",
            "@x: [1684234849,1751606885,1818978921,7302765]",
            "@m[[1684234849,1751606885,1818978921,7302765], 7]: 7302765",
            "@t: (1, [1,2])",
        ],
    );
}

#[test]
fn records_and_nested_tuples_are_stored_and_printed() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            r#"BEGIN { $v = 99; $p = (x = 1, y = 2);
                $t = (a = 0, b = "str", c = (5, (6, "in")), d = $p, e = $v);
                printf("%d %s %d %s %d %d\n", $t.a, $t.b, $t.c.0, $t.c.1.1, $t.d.y, $t.e);
                @r = $t; @k[$p] = $p.x;
                $o = (first = 1, second = "two"); $o = (second = "deux", first = 2); @o = $o;
                @n = ((int8)1, ((int8)-20, (int8)30)); @nk[(1, (2, "x"))] = 1;
                exit(); }"#,
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            "0 str 5 in 2 99",
            "@r: { .a = 0, .b = str, .c = (5, (6, in)), .d = { .x = 1, .y = 2 }, .e = 99 }",
            "@k[{ .x = 1, .y = 2 }]: 1",
            "@o: { .first = 2, .second = deux }",
            "@n: (1, (-20, 30))",
            "@nk[1, (2, x)]: 1",
        ],
    );
}

#[test]
fn structs_held_by_value_from_the_workloads_memory() {
    require_root!();
    // The workload passes `{ tv_sec: 0, tv_nsec: 2000003 }` to nanosleep:
    // a struct of the kernel's BTF copied whole into maps, keys and
    // variables, and one of the script's read as an array of structs.
    let out = trace_workload(
        "struct P { int32_t lo; int32_t hi; } struct T { struct P p[2]; } tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { $ts = *(struct __kernel_timespec *)args.rqtp; @ts = $ts; @k[$ts, 1] = count(); @n = $ts.tv_nsec; $t = (struct T *)args.rqtp; @p = $t.p[1]; @lo = $t.p[1].lo; @all = *$t; @tup = (7, *$t); }",
        "nanosleep 2000003 3",
        &[],
    );
    expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            "@ts: { .tv_sec = 0, .tv_nsec = 2000003 }",
            "@k[{ .tv_sec = 0, .tv_nsec = 2000003 }, 1]: 3",
            "@n: 2000003",
            "@p: { .lo = 2000003, .hi = 0 }",
            "@lo: 2000003",
            "@all: { .p = [{ .lo = 0, .hi = 0 },{ .lo = 2000003, .hi = 0 }] }",
            "@tup: (7, { .p = [{ .lo = 0, .hi = 0 },{ .lo = 2000003, .hi = 0 }] })",
        ],
    );
}
