//! Builtins of kernel function probes and raw tracepoints. Their lowering
//! is `codegen::lower::builtins::kprobe`.
//!
//! - `argN`: in kprobes, the Nth integer argument by the x86_64 calling
//!   convention, read from `struct pt_regs` (`abi::arch`); in raw
//!   tracepoints, the Nth raw u64 argument. A `uint64`.
//! - `retval`: in kretprobes `rax` (a `uint64`); in fexit the function's
//!   return value, typed by its BTF prototype.
//! - `func`: the probed kernel function's address, a `ksym` (printed as
//!   its name; a map may hold it with `ksym(addr)` values, as in bpftrace).
//! - `args->NAME` (fentry, fexit, raw tracepoints with BTF): see the providers.

use ktypes::{FieldKind, TpField};

use crate::providers::{Context, FentryMode};
use crate::types::Type;

/// Most arguments a raw tracepoint or trampoline program can read (`MAX_BPF_FUNC_ARGS`).
pub const MAX_CTX_ARGS: u8 = 12;

/// The type of `argN` in a kernel probe context.
pub fn arg_type(n: u8, context: &Context) -> Result<Type, &'static str> {
    match context {
        Context::Kprobe {
            retprobe: false, ..
        } => Ok(Type::U64),
        Context::Kprobe { retprobe: true, .. } => Err(
            "arguments are gone when the function returns: save them in a kprobe on the same function, keyed by tid, and read them back in the kretprobe",
        ),
        Context::RawTracepoint { args } => {
            let limit = args
                .as_ref()
                .map_or(MAX_CTX_ARGS as usize, |f| f.fields.len());
            if (n as usize) < limit {
                Ok(Type::U64)
            } else {
                Err(
                    "this raw tracepoint has fewer arguments: list them with weft -lv 'rawtracepoint:NAME'",
                )
            }
        }
        // A kprobe running as fentry: `argN` is the Nth BTF parameter.
        Context::Fentry {
            mode: FentryMode::ForKprobe,
            exit: false,
            args,
            ..
        } => match args.fields.get(n as usize) {
            Some(f) => Ok(value_type(f)),
            None => Err(
                "this function has fewer parameters (it runs as fentry here, typed by its BTF prototype: weft -lv 'fentry:FUNCTION' lists them)",
            ),
        },
        Context::Fentry {
            mode: FentryMode::ForKprobe,
            exit: true,
            ..
        } => Err(
            "arguments are gone when the function returns: save them in a kprobe on the same function, keyed by tid, and read them back in the kretprobe",
        ),
        Context::Fentry { .. } => Err(
            "fentry/fexit arguments have names: use `args->NAME` (weft -lv 'fentry:FUNCTION' lists them)",
        ),
        _ => Err("`argN` exists in kprobe, uprobe, usdt and rawtracepoint probes"),
    }
}

/// The type of `retval` in a kernel probe context.
pub fn retval_type(context: &Context) -> Result<Type, &'static str> {
    match context {
        Context::Kprobe { retprobe: true, .. } => Ok(Type::U64),
        Context::Kprobe {
            retprobe: false, ..
        } => Err("the return value exists only when the function returns: use kretprobe"),
        Context::Fentry {
            exit: true,
            retval: Some(f),
            ..
        } => Ok(value_type(f)),
        Context::Fentry {
            exit: true,
            retval: None,
            ..
        } => Err("this function returns nothing (`void`)"),
        Context::Fentry { exit: false, .. } => {
            Err("the return value exists only when the function returns: use fexit")
        }
        _ => Err("`retval` exists in kretprobe, uretprobe and fexit probes"),
    }
}

/// The type of `func` in a kernel probe context.
pub fn func_type(context: &Context) -> Result<Type, &'static str> {
    match context {
        // The function's address, printed as its name: one map holds
        // `func` and `ksym(addr)` alike, as in bpftrace.
        Context::Kprobe { .. } | Context::Fentry { .. } => Ok(Type::Sym { user: false }),
        _ => Err("`func` exists in kprobe, kretprobe, fentry, fexit, uprobe and uretprobe probes"),
    }
}

/// The type of a BTF-described value (a parameter or return value).
pub fn value_type(f: &TpField) -> Type {
    match f.kind {
        FieldKind::Pointer => Type::Pointer {
            c_type: f.c_type.clone(),
        },
        _ => Type::Int {
            size: f.size.clamp(1, 8) as u8,
            signed: f.signed,
        },
    }
}

/// True for the contexts this file types.
pub fn is_kernel_context(context: &Context) -> bool {
    matches!(
        context,
        Context::Kprobe { .. } | Context::Fentry { .. } | Context::RawTracepoint { .. }
    )
}
