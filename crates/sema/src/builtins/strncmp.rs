//! `strncmp(s1, s2, n)`: 0 when the strings `s1` and `s2` agree in their
//! first `n` bytes (or up to a NUL both share before that), else 1.
//!
//! What it does: compares as C's `strncmp` does, but never reads past the
//! shorter string's buffer (bpftrace's rule): `strncmp("one", "one ", 4)`
//! is 1 because the first string's NUL meets a space, and `n` larger than
//! either string is cut to the shorter one. `n` is any integer; a literal
//! (or a positional parameter) keeps the program to the bytes it names.
//! `==` and `!=` are the usual way to compare whole strings.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat /strncmp(str(args.filename), "/tmp/", 5) == 0/ { @[comm] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::strncmp` (the bytes compared one by
//! one, a literal side against immediates).

use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "strncmp",
    signature: "strncmp(s1, s2, n)",
    help: "0 when the strings s1 and s2 agree in their first n bytes, else 1",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let args = cx.args;
    if args.len() != 3 {
        cx.check_all();
        cx.wrong_arg_count("two strings and a length");
        return Type::I64;
    }
    for (arg, what) in args.iter().zip(["first string", "second string"]) {
        let t = cx.check(arg);
        if !matches!(t, Type::Str { .. }) {
            let place = format!("strncmp()'s {what}");
            cx.error(diag::type_mismatch(arg.span, &place, "a string", &t));
        }
    }
    let n = &args[2];
    let t = cx.check(n);
    if cx.expect_int(n, &t, "strncmp()'s length")
        && let ExprKind::Int { value, .. } = n.kind
    {
        cx.set_value(CallValue::Constant(value.min(i64::MAX as u64) as i64));
    }
    Type::I64
}
