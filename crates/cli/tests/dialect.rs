//! Kernel tests of bpftrace's current dialect (issue 14): lexical scopes,
//! `let`, block and `if` values, macros, positional parameters and range
//! loops, map loops. weft traces the workload (`-c`,
//! filtered by `cpid`) and the output is what bpftrace's current release
//! prints for the same script.

mod common;

use common::{run_weft, trace_workload};

#[test]
fn let_scopes_and_block_values_on_the_workload() {
    require_root!();
    // `$b` is declared twice, in two blocks; `let $b: uint8` converts (300 is
    // 44); `let $z;` is zero; a block and an `if` are values; `$e`, assigned in
    // both branches and read after them, is one variable (0.17's meaning).
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
        let $n = 1; \
        if ($n) { let $b: uint8 = 300; @narrow = $b; } \
        if (1) { let $b = 7; @wide = $b; } \
        let $z; @z = sum($z); \
        if (pid == 0) { $e = 1; } else { $e = 2; } @e = sum($e); \
        @v = sum({ let $d = 2; $d * $n }); \
        @w[if (pid == cpid) { \"yes\" } else { \"no\" }] = count(); }";
    let out = trace_workload(script, "getppid 100", &[]);
    assert_eq!(
        out.stdout,
        "\n\n@e: 200\n@narrow: 44\n@v: 200\n@w[yes]: 100\n@wide: 7\n@z: 0\n"
    );
}

#[test]
fn macros_expand_on_the_workload() {
    require_root!();
    // `$v` and `@m` are the caller's; `k` and `x` are copied where they
    // appear; `$local` is the macro's own and never meets the caller's.
    let script = "macro bump($v, @m, k) { let $local = k; $v += $local; @m[k] = count(); $v }\n\
        macro twice(x) { x + x }\n\
        tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
        $t = 1; $local = 40; $r = bump($t, @by, 2); \
        @sum = sum($r + $t); @tw = sum(twice(5)); @local = sum($local); }";
    let out = trace_workload(script, "getppid 100", &[]);
    assert_eq!(
        out.stdout,
        "\n\n@by[2]: 100\n@local: 4000\n@sum: 600\n@tw: 1000\n"
    );
}

#[test]
fn positional_parameters_as_integers_text_and_attach_points() {
    require_root!();
    // `$1` where a literal must be (unroll, lhist), `$2` in octal, `str($3)`
    // of a number, and the probe itself from `$4`.
    let script = "tracepoint:syscalls:sys_enter_$4 /pid == cpid/ { \
        unroll($1) { @u = count(); } \
        @l = lhist($2, 0, 20, 10); @k = lhist(5, 0, $2, 1); \
        @s[str($3)] = count(); \
        @n = sum($#); }";
    let out = trace_workload(script, "getppid 10", &["3", "010", "7", "getppid"]);
    assert_eq!(
        out.stdout,
        "\n\n@k:\n[5]                   10 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\n\
         @l:\n[0, 10)               10 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\n\
         @n: 40\n@s[7]: 10\n@u: 30\n"
    );
}

#[test]
fn range_loops_on_the_workload() {
    require_root!();
    // A bound from `$1`, `continue`, nested loops whose inner bound is the
    // outer variable, `break`, and `return` from inside a loop (each leaves
    // its iterators ended, or the verifier would refuse the program).
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
        for ($i : 0..$1) { if ($i == 3) { continue; } @[$i] = sum($i + 1); } \
        $s = 0; \
        for ($j : 1..10) { for ($k : 0..$j) { $s += 1; } if ($j == 4) { break; } } \
        @s = sum($s); \
        for ($n : (-2)..0) { @neg = sum($n); } \
        for ($z : 5..5) { @never = count(); } } \
        tracepoint:syscalls:sys_exit_getppid /pid == cpid/ { \
        for ($i : 0..100) { if ($i == 7) { @r = sum($i); return; } } @after = count(); }";
    let out = trace_workload(script, "getppid 10", &["5"]);
    assert_eq!(
        out.stdout,
        "\n\n@[0]: 10\n@[1]: 20\n@[2]: 30\n@[4]: 50\n@neg: -30\n@r: 70\n@s: 100\n"
    );
}

#[test]
fn map_loops_on_the_workload() {
    require_root!();
    // Each loop's body is a callback the kernel calls per element: one key,
    // two keys (a tuple key), string keys and values, a variable updated in
    // the body (`$sum`, `$last`) and read after it, nested loops, `continue`,
    // `break`, deleting the element being visited, and `return` from inside
    // a loop leaving the whole probe (`@after` never counts).
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
        @one[1] = 10; @one[2] = 20; @two[1, 2] = 3; @two[4, 5] = 6; \
        @str[\"ab\"] = \"x\"; @str[\"cd\"] = \"y\"; \
        $sum = 0; $last = \"none\"; \
        for ($kv : @one) { $sum += $kv.1; } @sum = sum($sum); \
        for ($kv : @two) { @twokeys[$kv.0.0 + $kv.0.1] = sum($kv.1); } \
        for ($kv : @str) { @strs[$kv.1] = $kv.0; if ($kv.0 == \"cd\") { $last = $kv.1; } } \
        @last[$last] = count(); \
        for ($a : @one) { for ($b : @two) { @nested[$a.0, $b.0.0] = sum($a.0 * 10 + $b.0.0); } } \
        for ($kv : @one) { if ($kv.0 == 1) { continue; } @cont[$kv.0] = count(); } \
        $n = 0; for ($kv : @one) { $n++; break; } @brk = sum($n); } \
        tracepoint:syscalls:sys_exit_getppid /pid == cpid/ { \
        @d[1] = 1; @d[2] = 2; @d[3] = 3; \
        for ($kv : @d) { if ($kv.0 == 2) { delete(@d, $kv.0); } } \
        for ($kv : @d) { if ($kv.0 == 3) { @ret = count(); return; } } \
        @after = count(); }";
    let out = trace_workload(script, "getppid 10", &[]);
    assert_eq!(
        out.stdout,
        "\n\n@brk: 10\n@cont[2]: 10\n@d[1]: 1\n@d[3]: 3\n@last[y]: 10\n\
         @nested[1, 1]: 110\n@nested[1, 4]: 140\n@nested[2, 1]: 210\n@nested[2, 4]: 240\n\
         @one[1]: 10\n@one[2]: 20\n@ret: 10\n@str[ab]: x\n@str[cd]: y\n\
         @strs[x]: ab\n@strs[y]: cd\n@sum: 300\n@two[1, 2]: 3\n@two[4, 5]: 6\n\
         @twokeys[3]: 30\n@twokeys[9]: 60\n"
    );
}

#[test]
fn map_loop_prints_each_element_in_begin() {
    require_root!();
    // bpftrace's own form: `print($kv)` of each (key, value) from BEGIN,
    // which leaves by itself; printed once each, before the maps at exit.
    let out = run_weft(
        &[
            "-e",
            "BEGIN { @m[\"k\", 1] = 2; for ($kv : @m) { print($kv); print($kv.0.0); } }",
        ],
        std::time::Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "((k, 1), 2)\nk\n\n\n@m[k, 1]: 2\n");
}

#[test]
fn return_with_a_value_inside_a_map_loop_leaves_the_probe() {
    require_root!();
    // The callback may only return 0 or 1 (the verifier checks): the value
    // goes back through the loop's context and the program returns it.
    let out = run_weft(
        &[
            "-e",
            "BEGIN { @m[3] = 4; for ($kv : @m) { if ($kv.0 == 3) { return 7; } } @after = 1; }",
        ],
        std::time::Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "\n\n@m[3]: 4\n");
}
