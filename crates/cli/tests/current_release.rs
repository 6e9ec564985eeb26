//! Kernel tests of issue 22: constructs of bpftrace's current tools and
//! documented examples, each in a script of our own run on the workload,
//! whose own calls give every expected value.

mod common;

use common::{trace_workload, workload};

/// A map fed by two tracepoints whose pointer fields differ only by
/// `const` (`clock_nanosleep`'s `const struct __kernel_timespec *rqtp`,
/// `nanosleep`'s without) keeps the pointer type, so `.tv_nsec` reads
/// through it.
#[test]
fn a_map_of_pointers_differing_by_const_reads_through_them() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_clock_nanosleep,tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { @r[tid] = args.rqtp; }
        tracepoint:syscalls:sys_exit_nanosleep /has_key(@r, tid)/ { $t = @r[tid]; @ns[$t.tv_sec, $t.tv_nsec] = count(); delete(@r, tid); }";
    let out = trace_workload(script, "nanosleep 1000003 3", &[]);
    assert_eq!(out.stdout, "\n\n@ns[0, 1000003]: 3\n");
}

/// `func` is the probed function as a `usym`, as in bpftrace: one map
/// holds it and `usym(reg("ip"))`, and both print the function's name; at
/// a return `func` is still the function (not the return address).
#[test]
fn func_shares_a_map_with_usym() {
    require_root!();
    let bin = workload();
    let bin = bin.display();
    let script = format!(
        r#"uprobe:{bin}:weft_workload_marker /pid == cpid/ {{ @[func] = count(); @[usym(reg("ip"))] = count(); }}
        uretprobe:{bin}:weft_workload_marker /pid == cpid/ {{ @r[func] = count(); }}"#
    );
    let out = trace_workload(&script, "call 3", &[]);
    assert_eq!(
        out.stdout,
        "\n\n@[weft_workload_marker]: 6\n@r[weft_workload_marker]: 3\n"
    );
}
