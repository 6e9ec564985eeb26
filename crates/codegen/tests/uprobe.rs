//! Lowering snapshots of user-space probes: `argN` and `retval` read
//! `struct pt_regs`, USDT operands become register loads, constants and
//! `bpf_probe_read_user` of memory, each extended by its size and sign.
//! The binary is a tiny ELF made in memory (`uelf::testing`). Bless with
//! `INSTA_UPDATE=always cargo test -p codegen --test uprobe`.

use ktypes::FixtureKernel;
use uelf::testing::{Probe, tiny_elf};

fn kernel() -> FixtureKernel {
    let probes = [
        Probe {
            provider: "weft",
            name: "regs",
            args: "-4@%edi 8@%rsi 1@%ah",
            semaphore: 0,
        },
        Probe {
            provider: "weft",
            name: "mem",
            args: "-4@-20(%rbp) 8@16(%rax,%rbx,8) -2@$-7",
            semaphore: 0,
        },
    ];
    FixtureKernel::typical().with_file("/opt/app", tiny_elf(&["marker", "answer"], &probes))
}

mod common;

fn lower(src: &str) -> String {
    common::disasm_with_attach(&common::compile_on(src, &kernel()))
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
    uprobe_args_and_stack_arg,
    "uprobe:/opt/app:answer { @a = sum(arg0); @b = sum(arg5); @c = sum(arg6); }"
);
case!(
    uretprobe_retval,
    "uretprobe:/opt/app:answer { @ = sum(retval); }"
);
case!(
    func_is_the_probed_functions_address,
    "uprobe:/opt/app:* { @[func] = count(); }"
);
case!(
    usdt_register_args,
    "usdt:/opt/app:weft:regs { @a = sum(arg0); @b = sum(arg1); @c = sum(arg2); }"
);
case!(
    usdt_memory_and_constant_args,
    "usdt:/opt/app:mem { @a = sum(arg0); @b = sum(arg1); @c = sum(arg2); }"
);
