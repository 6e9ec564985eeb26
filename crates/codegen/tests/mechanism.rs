//! Lowering snapshots of kernel function probes running through the other
//! mechanism, and of struct members through BTF: fentry compiled as a
//! kprobe reads `args->NAME` from the argument registers of `struct
//! pt_regs` at its BTF width, fexit as a kretprobe reads `retval` from rax;
//! each `->` hop is one `bpf_probe_read_kernel`. Bless with
//! `INSTA_UPDATE=always cargo test -p codegen --test mechanism`.

use ktypes::{FixtureKernel, TracingFeatures};

mod common;

fn lower_on(src: &str, kernel: &FixtureKernel) -> String {
    common::disasm_with_attach(&common::compile_on(src, kernel))
}

/// The fixture kernel with BTF and kprobes but no BPF trampolines.
fn no_trampolines() -> FixtureKernel {
    FixtureKernel::typical().with_tracing_features(TracingFeatures::from_flags(true, false, true))
}

#[test]
fn fentry_compiled_as_kprobe() {
    let src = "fentry:do_sys_openat2 { @[args->dfd] = sum(args->how); }";
    insta::assert_snapshot!(
        "fentry_compiled_as_kprobe",
        lower_on(src, &no_trampolines()),
        src
    );
}

#[test]
fn fexit_compiled_as_kretprobe() {
    let src = "fexit:do_sys_openat2 { @ = sum(retval); }";
    insta::assert_snapshot!(
        "fexit_compiled_as_kretprobe",
        lower_on(src, &no_trampolines()),
        src
    );
}

#[test]
fn kprobe_compiled_as_fentry() {
    let src = "kprobe:do_sys_openat2 { @ = sum(arg0); }";
    let kernel = FixtureKernel::typical()
        .with_tracing_features(TracingFeatures::from_flags(true, true, false));
    insta::assert_snapshot!("kprobe_compiled_as_fentry", lower_on(src, &kernel), src);
}

#[test]
fn member_chain_one_read_per_arrow() {
    let src =
        "kprobe:vfs_read { @[str(((struct file *)arg0)->f_path.dentry->d_name.name)] = count(); }";
    insta::assert_snapshot!(
        "member_chain_one_read_per_arrow",
        lower_on(src, &FixtureKernel::typical()),
        src
    );
}

#[test]
fn curtask_members() {
    let src = "tracepoint:sched:sched_wakeup { @[curtask->tgid, ((struct task_struct *)curtask)->comm] = count(); }";
    insta::assert_snapshot!(
        "curtask_members",
        lower_on(src, &FixtureKernel::typical()),
        src
    );
}
