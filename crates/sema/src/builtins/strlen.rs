//! `strlen(s)`: the length of the string `s`, the bytes before its first
//! NUL, a `uint64`, as bpftrace's standard library has it.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat { @len = hist(strlen(str(args.filename))); }`
//!
//! Lowering: `codegen::lower::builtins::strlen` (the count of
//! `strcontains`, which never branches on the string's bytes).

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "strlen",
    signature: "strlen(s)",
    help: "the length of the string s, the bytes before its first NUL",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let [arg] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("one string");
        return Type::U64;
    };
    let t = cx.check(arg);
    if !matches!(t, Type::Str { .. }) {
        cx.error(diag::type_mismatch(arg.span, "strlen()", "a string", &t));
    }
    Type::U64
}
