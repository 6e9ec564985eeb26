//! `join(array[, delim])`: prints the strings of a NULL-terminated array of
//! pointers (`args->argv` of `sys_enter_execve`) separated by `delim`
//! (default a space), as bpftrace does: at most 16 strings of 255 bytes.
//!
//! Why it is limited: the delimiter must be a string literal.
//!
//! Lowering: `codegen::lower::builtins::join` (one record with the strings).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "join",
    signature: "join(array[, delim])",
    help: "prints the strings of a NULL-terminated array, joined by delim",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let delimiter = match cx.args {
        [_] => " ".to_string(),
        [
            _,
            Expr {
                kind: ExprKind::Str(b),
                ..
            },
        ] => String::from_utf8_lossy(b).into_owned(),
        [_, d] => {
            cx.needs_literal(d.span, "join()'s delimiter");
            return Type::Void;
        }
        _ => {
            cx.wrong_arg_count("an array and an optional delimiter");
            return Type::Void;
        }
    };
    let array = &cx.args[0];
    let t = cx.check(array);
    if !matches!(t, Type::Pointer { .. }) {
        cx.error(diag::type_mismatch(
            array.span,
            "join()",
            "a pointer to an array of strings (like args->argv)",
            &t,
        ));
    }
    let index = cx.add_join_delimiter(delimiter);
    cx.set_value(CallValue::Site(index));
    Type::Void
}
