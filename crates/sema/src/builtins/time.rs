//! `time([fmt])`: prints the local time now in strftime(3)'s `fmt`
//! (default `%H:%M:%S\n`), as bpftrace does. The probe sends a record; user
//! space reads the clock and formats it when it prints.
//!
//! Why it is limited: the format must be a string literal.
//!
//! Lowering: `codegen::lower::builtins::time` (a record naming the format).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "time",
    signature: "time([fmt])",
    help: "prints the local time now, formatted by strftime(3)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let format = match cx.args {
        [] => "%H:%M:%S\n".to_string(),
        [
            Expr {
                kind: ExprKind::Str(b),
                ..
            },
        ] => String::from_utf8_lossy(b).into_owned(),
        [a, ..] => {
            cx.needs_literal(a.span, "time()'s format");
            return Type::Void;
        }
    };
    let index = cx.add_time_format(format);
    cx.set_value(CallValue::Site(index));
    Type::Void
}
