//! `override(RC)`: makes the probed kernel function return `RC` without
//! running (`bpf_override_return`), as bpftrace's `override`.
//!
//! Why it is limited: it changes the system, so it needs `--unsafe`; it
//! works only in a kprobe at a function's entry, and the kernel allows it
//! only for functions marked for error injection (`ALLOW_ERROR_INJECTION`)
//! in kernels built with `CONFIG_BPF_KPROBE_OVERRIDE`; elsewhere the kernel
//! refuses the program when it loads.
//!
//! Example: `kprobe:__x64_sys_getuid /comm == "id"/ { override(2 << 21); }`
//!
//! Lowering: `codegen::lower::builtins::override_return` (one helper call).

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "override",
    signature: "override(rc)",
    help: "makes the probed kernel function return rc without running it (kprobe, --unsafe)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    cx.require_unsafe("changes what a kernel function returns");
    let is_entry_kprobe = matches!(
        cx.probe().attach,
        abi::Attach::Kprobe {
            retprobe: false,
            ..
        }
    );
    if !is_entry_kprobe {
        let provider = cx.probe().provider;
        let d = diag::not_in_this_probe(
            cx.call.span,
            "override",
            provider,
            "kprobes at a function's entry (a kernel with kprobes)",
        );
        cx.error(d);
    }
    match cx.args {
        [rc] => {
            let t = cx.check(rc);
            cx.expect_int(rc, &t, "override()'s return value");
        }
        _ => cx.wrong_arg_count("a return value"),
    }
    Type::Void
}
