//! `write_user(dst, src, len)`: writes `len` bytes of the program's value
//! `src` (a string, tuple or other value) to user address `dst` in the
//! current process, `bpf_probe_write_user`, as bpftrace's standard library
//! has it. A `bool`: true when the write succeeded.
//!
//! Why it is limited: it changes a process's memory, so it needs
//! `--unsafe` (the kernel also logs a warning when it loads the program).
//! The kernel takes a length it can check against `src`'s size when it
//! loads the program, so `len` is a literal from 1 to that size.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat /comm == "myapp"/ { $p = "/tmp/redirected\0"; if (write_user(args.filename, $p, 16)) { printf("redirected\n"); } }`
//!
//! Lowering: `codegen::lower::builtins::write_user` (the value written to
//! the stack, then the helper).

use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "write_user",
    signature: "write_user(dst, src, len)",
    help: "writes len bytes of src to user address dst (--unsafe)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    cx.require_unsafe("writes to a process's memory");
    let [dst, src, len] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("an address, a value and a length");
        return Type::Bool;
    };
    let dst_ty = cx.check(dst);
    cx.expect_int(dst, &dst_ty, "write_user()'s address");
    let src_ty = cx.check(src);
    let size = src_ty.stored().layout().size();
    if size == 0 {
        cx.error(diag::type_mismatch(
            src.span,
            "write_user()'s value",
            "a value held in memory",
            &src_ty,
        ));
        return Type::Bool;
    }
    cx.check(len);
    match len.kind {
        ExprKind::Int { value, .. } if (1..=u64::from(size)).contains(&value) => {
            cx.set_value(CallValue::Constant(value as i64));
        }
        ExprKind::Int { value, .. } => cx.error(diag::write_user_length(len.span, value, size)),
        _ => cx.needs_literal(len.span, "write_user()'s length"),
    }
    Type::Bool
}
