//! `print(@m[, top[, div]])`: prints a map now, as at exit: its `top`
//! largest entries (all when 0), values divided by `div`. Done by user
//! space when it reads the probe's record.
//!
//! Why it is limited: `print(value)` of a value that is not a map is not
//! supported yet.
//!
//! Lowering: `codegen::lower::builtins::print` (a record naming the map).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "print",
    signature: "print(@m[, top[, div]])",
    help: "prints a map now (its top entries, values divided by div)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    match cx.args {
        [
            m @ Expr {
                kind: ExprKind::Map { keys, .. },
                ..
            },
            rest @ ..,
        ] if keys.is_empty() && rest.len() <= 2 => {
            cx.map_ref(m, None);
            for r in rest {
                let t = cx.check(r);
                cx.expect_int(r, &t, "print()'s top and div");
            }
        }
        [v] => cx.not_supported_yet(v.span, "print() of a value that is not a map"),
        _ => cx.wrong_arg_count("a map and up to two integers"),
    }
    Type::Void
}
