//! Builtins that read `struct pt_regs` in user-space probes: `arg0`..`argN`,
//! `retval` and `func`. Their lowering is `codegen::lower::builtins::uprobe`.
//!
//! - `argN` (uprobe): the Nth integer argument of the System V x86_64
//!   calling convention (`rdi, rsi, rdx, rcx, r8, r9`, then the stack),
//!   a `uint64`. In usdt probes: the Nth operand of the site's argument
//!   spec, an integer of the spec's size and signedness.
//! - `retval` (uretprobe): `rax`, a `uint64`.
//! - `func` (uprobe, uretprobe): the probed function's address, a `usym`
//!   (printed as its name; a map may hold it with `usym(addr)` values).

use crate::providers::Context;
use crate::types::Type;

/// The type of `argN` in a probe with this context.
pub fn arg_type(n: u8, context: &Context) -> Result<Type, &'static str> {
    match context {
        c if super::kprobe::is_kernel_context(c) => super::kprobe::arg_type(n, context),
        Context::Uprobe {
            retprobe: false, ..
        } => Ok(Type::U64),
        Context::Uprobe { retprobe: true, .. } => Err(
            "arguments are gone when the function returns: save them in a uprobe on the same function, keyed by tid, and read them back in the uretprobe",
        ),
        Context::Usdt { args } => match args.get(n as usize) {
            Some(a) => Ok(Type::Int {
                size: a.size,
                signed: a.signed,
            }),
            None => {
                Err("this USDT probe has fewer arguments: list them with weft -lv 'usdt:BINARY:*'")
            }
        },
        _ => Err(
            "`argN` exists in uprobe and usdt probes; in tracepoints use `args->NAME` (weft -lv lists the fields)",
        ),
    }
}

/// The type of `retval` in a probe with this context.
pub fn retval_type(context: &Context) -> Result<Type, &'static str> {
    match context {
        c if super::kprobe::is_kernel_context(c) => super::kprobe::retval_type(context),
        Context::Uprobe { retprobe: true, .. } => Ok(Type::U64),
        Context::Uprobe {
            retprobe: false, ..
        } => Err("the return value exists only when the function returns: use uretprobe"),
        _ => Err(
            "`retval` exists in kretprobe, uretprobe and fexit probes; for a syscall's result use `args->ret` in tracepoint:syscalls:sys_exit_*",
        ),
    }
}

/// The type of `func` in a probe with this context.
pub fn func_type(context: &Context) -> Result<Type, &'static str> {
    match context {
        c if super::kprobe::is_kernel_context(c) => super::kprobe::func_type(context),
        // The function's address, printed as its name (`usym`), as in bpftrace.
        Context::Uprobe { .. } => Ok(Type::Sym { user: true }),
        _ => Err("`func` exists in kprobe, kretprobe, fentry, fexit, uprobe and uretprobe probes"),
    }
}
