//! `clear(@m)` and `zero(@m)`: remove every element of a map, or set every
//! value to zero. Done by user space when it reads the probe's record, so
//! that output and map changes keep their order.
//!
//! Lowering: `codegen::lower::builtins::clear` (a record naming the map).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const CLEAR: FunctionDef = FunctionDef {
    name: "clear",
    signature: "clear(@m)",
    help: "removes every element of a map",
    check,
    aggregates: false,
};

pub const ZERO: FunctionDef = FunctionDef {
    name: "zero",
    signature: "zero(@m)",
    help: "sets every value of a map to zero",
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
        ] if keys.is_empty() => cx.map_ref(m, None),
        _ => cx.wrong_arg_count("one map, like `@m`"),
    }
    Type::Void
}
