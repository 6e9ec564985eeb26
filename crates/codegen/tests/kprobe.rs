//! Lowering snapshots of kernel probes: kprobe `argN`/`retval` read
//! `struct pt_regs` through `abi::arch` (the stack for arguments past the
//! sixth, with `bpf_probe_read_kernel`), raw tracepoint arguments are 8-byte
//! context loads, fentry `args->NAME` and fexit `retval` load the u64 array
//! with the width of their BTF type. Bless with
//! `INSTA_UPDATE=always cargo test -p codegen --test kprobe`.

use ktypes::FixtureKernel;

mod common;

fn lower(src: &str) -> String {
    common::disasm_with_attach(&common::compile_on(src, &FixtureKernel::typical()))
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), lower($src), $src);
        }
    };
}

case!(
    kprobe_args,
    "kprobe:vfs_read { @ = sum(arg2); @s = sum(arg7); }"
);
case!(
    kretprobe_retval,
    "kretprobe:vfs_read { @[func] = sum(retval); }"
);
case!(
    rawtracepoint_arg,
    "rawtracepoint:sys_enter { @[arg1] = count(); }"
);
case!(
    fentry_typed_arg,
    "fentry:do_sys_openat2 { @ = sum(args->dfd); }"
);
case!(
    fexit_typed_retval,
    "fexit:do_sys_openat2 { @ = sum(retval); }"
);
