//! Kernel tests of bitfields (issue 14):
//!
//! - a BTF bitfield of the kernel's structs (`curtask->in_execve`, one bit
//!   of `struct task_struct`) reads 1 while the workload is being exec'ed
//!   and 0 in its system calls afterwards;
//! - a struct the script defines with bitfields, copied from memory
//!   (`*(struct foo *)&$val`), prints each field's bits, in text and JSON,
//!   and `.x_2` reads them alone, as bpftrace's current release prints them.

mod common;

use common::{run_weft, trace_workload};
use std::time::Duration;

#[test]
fn a_btf_bitfield_is_its_bit() {
    require_root!();
    let script = "tracepoint:sched:sched_process_exec /pid == cpid/ { @exec = curtask->in_execve; } \
                  tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @after = curtask->in_execve; @n = count(); }";
    let out = trace_workload(script, "getppid 3", &[]);
    assert_eq!(
        out.stdout, "\n\n@after: 0\n@exec: 1\n@n: 3\n",
        "{}",
        out.stderr
    );
}

const SCRIPT_STRUCT: &str = "struct foo { unsigned long long x_0:1; unsigned long long x_1:1; unsigned long long x_2:2; } \
     begin { $val = (uint64)0x1e; $f = *(struct foo *)(&$val); print($f); print($f.x_2); @f = $f; }";

#[test]
fn a_script_struct_with_bitfields_prints_its_fields() {
    require_root!();
    let out = run_weft(&["-q", "-e", SCRIPT_STRUCT], Duration::from_secs(30));
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "{ .x_0 = 0, .x_1 = 1, .x_2 = 3 }\n3\n\n\n@f: { .x_0 = 0, .x_1 = 1, .x_2 = 3 }\n"
    );
    let out = run_weft(
        &["-q", "-f", "json", "-e", SCRIPT_STRUCT],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(
        out.stdout
            .contains(r#"{"type": "value", "data": {"x_0": 0, "x_1": 1, "x_2": 3}}"#),
        "{}",
        out.stdout
    );
}
