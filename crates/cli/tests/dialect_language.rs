//! Kernel tests of language pieces of bpftrace's current dialect (issue 14)
//! that bpftrace's runtime suite exercises: buffers compared and chosen by
//! a ternary, a ternary of two effects, division by zero at run time, and
//! `import` of scripts, headers and directories. weft
//! traces the workload (`-c`, filtered by `cpid`) and the output is what
//! bpftrace's current release prints for the same script.

mod common;

use std::time::Duration;

use common::{run_weft, scratch, trace_workload, workload};

const GETPPID: &str = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/";

#[test]
fn buffers_compare_and_a_ternary_chooses_between_them() {
    require_root!();
    // Buffers of two sizes: equal when their lengths and bytes are; a
    // ternary of a 2-byte and a 3-byte buffer holds either.
    let script = format!(
        r#"{GETPPID} {{ $a = buf("hi", 2); $b = buf("bye", 3); $c = buf("hix", 2);
        printf("%d %d %d %d\n", $a == $a, $a != $b, $a == $c, $a == buf("ho", 2));
        $t = pid == cpid ? buf("hi", 2) : buf("bye", 3); print($t);
        $f = pid != cpid ? buf("hi", 2) : buf("bye", 3); print($f); }}"#
    );
    let out = trace_workload(&script, "getppid 2", &[]);
    let once = "1 1 1 0\nhi\nbye\n";
    assert_eq!(out.stdout, format!("{once}{once}\n\n"), "{}", out.stderr);
}

#[test]
fn a_ternary_of_two_effects_runs_one() {
    require_root!();
    let script = format!(
        r#"{GETPPID} {{ pid == cpid ? printf("yes\n") : printf("no\n"); pid != cpid ? printf("no\n") : printf("yes too\n"); }}"#
    );
    let out = trace_workload(&script, "getppid 2", &[]);
    let once = "yes\nyes too\n";
    assert_eq!(out.stdout, format!("{once}{once}\n\n"), "{}", out.stderr);
}

#[test]
fn division_by_zero_gives_one_and_warns_where() {
    require_root!();
    // BPF alone would give 0 for `/ 0` and 10 for `% 0`; bpftrace gives 1
    // and a warning with the script's line, each time. A literal divisor
    // is not checked.
    let script = format!(
        "{GETPPID} {{ $z = pid - pid; @q = sum(10 / $z); @r = sum(10 % $z); \
         $v = 7; $v /= $z; @v = sum($v); @ok = sum(9 / 3 + 10 / (pid - pid + 2)); }}"
    );
    let out = trace_workload(&script, "getppid 2", &[]);
    assert_eq!(
        out.stdout, "\n\n@ok: 16\n@q: 2\n@r: 2\n@v: 2\n",
        "{}",
        out.stderr
    );
    let warning = "WARNING: Divide or modulo by 0 detected. This can lead to unexpected results. \
                   1 is being used as the result.";
    // Each place as `stdin:1:FROM-TO`, its line, and `~` under it.
    let place = |text: &str| {
        let from = script.find(text).unwrap();
        format!(
            "stdin:1:{}-{}: {warning}\n{script}\n{}{}\n",
            from + 1,
            from + 1 + text.len(),
            " ".repeat(from),
            "~".repeat(text.len())
        )
    };
    let once = place("10 / $z") + &place("10 % $z") + &place("$v /= $z");
    assert_eq!(out.stderr, format!("{once}{once}"));
}

#[test]
fn imported_scripts_headers_and_directories_run_with_the_script() {
    require_root!();
    // The script imports a file beside it (whose probe counts first, as an
    // import comes before the script's own probes) and a directory holding
    // a macro and a C header; the file imported twice counts once.
    let dir = scratch("imports");
    std::fs::create_dir_all(dir.join("lib")).unwrap();
    std::fs::write(
        dir.join("counting.bt"),
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @order = @order * 10 + 1; @n++; }\n",
    )
    .unwrap();
    std::fs::write(dir.join("lib/macros.bt"), "macro twice(x) { x * 2 }\n").unwrap();
    std::fs::write(dir.join("lib/pair.h"), "struct pair { int a; long b; };\n").unwrap();
    std::fs::write(
        dir.join("main.bt"),
        "import \"counting.bt\";\nimport \"lib\";\nimport \"counting.bt\";\n\
         tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @order = @order * 10 + 2; @t = sum(twice(sizeof(struct pair))); }\n",
    )
    .unwrap();
    let cmd = format!("{} getppid 2", workload().display());
    let main = dir.join("main.bt");
    let out = run_weft(
        &["-q", "-c", &cmd, main.to_str().unwrap()],
        Duration::from_secs(30),
    );
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout, "\n\n@n: 2\n@order: 1212\n@t: 64\n",
        "{}",
        out.stderr
    );
}

#[test]
fn an_import_that_is_not_found_names_the_line_and_the_paths_checked() {
    // No kernel needed: the script stops at compiling.
    let out = run_weft(
        &["-e", "import \"no_such_helpers.bt\";\nbegin { }"],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(1));
    assert_eq!(
        out.stderr,
        "stdin:1:1-29: ERROR: Unable to find suitable path for import\n\
         import \"no_such_helpers.bt\";\n\
         ~~~~~~~~~~~~~~~~~~~~~~~~~~~~ no such file or directory\n\
         HINT: checked: no_such_helpers.bt\n\
         CODE: E0070\n"
    );
}

#[test]
fn a_block_whose_value_is_an_aggregation_folds_into_the_map() {
    require_root!();
    // The block's statements run, then its aggregation updates the map.
    let script = format!(
        r#"{GETPPID} {{ @avg = {{ let $a = 100; avg($a) }}; @n[comm] = {{ $k = 3; sum($k) }}; }}"#
    );
    let out = trace_workload(&script, "getppid 2", &[]);
    assert_eq!(
        out.stdout, "\n\n@avg: 100\n@n[weftwl]: 6\n",
        "{}",
        out.stderr
    );
}

#[test]
fn the_address_of_a_tuple_reads_the_tuple_back() {
    require_root!();
    let script = format!(
        r#"{GETPPID} {{ $a = (1, "hello", cpid - pid + 2); print(*(&$a)); $p = &$a; printf("%s %d\n", (*$p).1, (*$p).2); }}"#
    );
    let out = trace_workload(&script, "getppid 2", &[]);
    let once = "(1, hello, 2)\nhello 2\n";
    assert_eq!(out.stdout, format!("{once}{once}\n\n"), "{}", out.stderr);
}

#[test]
fn division_by_zero_in_json_is_a_runtime_error_record() {
    require_root!();
    let script = format!("{GETPPID} {{ $z = pid - pid; @q = sum(10 / $z); }}");
    let out = trace_workload(&script, "getppid 1", &["-f", "json"]);
    let col = script.find("10 / $z").unwrap() + 1;
    assert_eq!(
        out.stdout,
        format!(
            "{{\"type\": \"runtime_error\", \"msg\": \"Divide or modulo by 0 detected. This can lead to unexpected results. 1 is being used as the result.\", \"filename\": \"stdin\", \"line\": 1, \"col\": {col}}}\n\
             {{\"type\": \"map\", \"data\": {{\"@q\": 1}}}}\n"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn the_address_of_a_string_reads_the_string_back() {
    require_root!();
    // `*(&$s)` is the string (bpftrace's pointer to a string), while a cast
    // to `int8 *` still walks its characters.
    let script = format!(
        r#"{GETPPID} {{ $a = comm; $b = &$a; $c = (int8 *)&$a; printf("%s %s %c%c\n", *$b, str($b), *$c, *($c + 1)); @[*$b] = count(); }}"#
    );
    let out = trace_workload(&script, "getppid 2", &[]);
    let once = "weftwl weftwl we\n";
    assert_eq!(
        out.stdout,
        format!("{once}{once}\n\n@[weftwl]: 2\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_address_of_a_builtins_value_reads_it_back() {
    require_root!();
    // A `username` and an `ntop()` address are no C types: `&$x` points to
    // the value itself, which `*` reads back and prints as itself.
    let script = format!(
        r#"{GETPPID} {{ $u = username; $p = &$u; $n = ntop(0x0100007f); $q = &$n; printf("%s %s\n", *$p, *$q); }}"#
    );
    let out = trace_workload(&script, "getppid 1", &[]);
    assert_eq!(out.stdout, "root 127.0.0.1\n\n\n", "{}", out.stderr);
}
