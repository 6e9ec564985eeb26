//! Kernel tests of language pieces of bpftrace's current dialect (issue 14)
//! that bpftrace's runtime suite exercises: buffers compared and chosen by
//! a ternary, a ternary of two effects, division by zero at run time. weft
//! traces the workload (`-c`, filtered by `cpid`) and the output is what
//! bpftrace's current release prints for the same script.

mod common;

use common::trace_workload;

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
