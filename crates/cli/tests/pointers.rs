//! Kernel tests of pointers as bpftrace's current dialect has them (issue
//! 14): casts to typed pointers, `*p`, `p[i]`, `&x`, arithmetic scaled by
//! the pointee's size, and `.` reading through a pointer, against the
//! workload's own syscall arguments, so every value is known exactly.

mod common;

use std::time::Duration;

use common::{expect_lines, run_weft, trace_workload};

#[test]
fn pointers_to_a_variable_read_its_bytes() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            r#"BEGIN { $v = (uint64)0x1122334455667788; $p = (uint8 *)&$v; $w = (uint16 *)&$v; $i = 2;
                printf("%x %x %x %x %lx\n", $p[0], *($p + 7), $w[1], $w[$i], *(&$v));
                $q = (int32 *)0x32; $q += 6; $r = $q - 1; $r--; $s = 3 + (uint64 *)0x10;
                @m = (int32 *)0x32; @m -= 6; @n = (int16 *)0x32; @n++;
                printf("%d %d %d %d %d\n", $q, $r, $s, @m, @n); clear(@m); clear(@n); exit(); }"#,
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    expect_lines(
        &out.stdout,
        &out.stderr,
        &["88 11 5566 3344 1122334455667788", "74 66 40 26 52"],
    );
}

#[test]
fn typed_pointers_read_the_workloads_timespec() {
    require_root!();
    // The workload passes `{ tv_sec: 0, tv_nsec: 2000003 }` to nanosleep.
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { $t = (int64 *)args.rqtp; @sec[$t[0]] = count(); @nsec[*($t + 1)] = count(); @dot[args.rqtp.tv_nsec] = count(); $h = (int32 *)args.rqtp; @low[$h[2]] = count(); $ts = (struct __kernel_timespec *)args.rqtp; @cast[$ts->tv_nsec + $ts.tv_sec] = count(); }",
        "nanosleep 2000003 5",
        &[],
    );
    expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            "@sec[0]: 5",
            "@nsec[2000003]: 5",
            "@dot[2000003]: 5",
            "@low[2000003]: 5",
            "@cast[2000003]: 5",
        ],
    );
}

#[test]
fn a_byte_pointer_indexes_the_workloads_buffer() {
    require_root!();
    // The workload writes buffers of `x` (0x78).
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_write /pid == cpid/ { $b = (uint8 *)args.buf; @[$b[3], *((uint16 *)args.buf + 1)] = count(); }",
        "write 8 4",
        &[],
    );
    expect_lines(&out.stdout, &out.stderr, &["@[120, 30840]: 4"]);
}
