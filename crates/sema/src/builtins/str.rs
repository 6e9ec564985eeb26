//! `str(ptr[, len])`: the NUL-terminated string at `ptr`.
//!
//! What it does: reads a string from kernel or user memory, stopping at its
//! NUL: up to `max_strlen` bytes (1024 as in bpftrace's current release,
//! unless the config or `BPFTRACE_MAX_STRLEN` says; up to 16384). As in
//! that release, below 1024 a string of `max_strlen` characters or more
//! prints with the truncation trailer (`..`); from 1024 up the read keeps
//! its NUL, so a longer string is cut to `max_strlen - 1` characters with
//! no trailer. With `len`, at most `len` bytes, its NUL included. A string
//! value gives itself, cut to `len`.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat { @[str(args->filename)] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::str` (`bpf_probe_read_str` into the
//! value's place).

use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "str",
    signature: "str(ptr[, len])",
    help: "the NUL-terminated string at ptr (at most len bytes)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let args = cx.args;
    // `max_strlen` (1024 unless the config says).
    let max = cx.config().max_strlen();
    if args.is_empty() || args.len() > 2 {
        cx.wrong_arg_count("one or two arguments");
        return Type::Str {
            size: max,
        };
    }
    let t = cx.check(&args[0]);
    let size = match args.get(1) {
        Some(len) => {
            let lt = cx.check(len);
            cx.expect_int(len, &lt, "str()'s length");
            match len.kind {
                ExprKind::Int { value, .. } => (value as u32).clamp(1, max.saturating_sub(1).max(1)) + 1,
                _ => max,
            }
        }
        None => max,
    };
    match t {
        Type::Str { size: own } => Type::Str {
            size: own.min(size),
        },
        t if t.is_scalar() => Type::Str { size },
        t => {
            cx.error(diag::type_mismatch(
                args[0].span,
                "str()",
                "a pointer or a string",
                &t,
            ));
            Type::Str { size }
        }
    }
}
