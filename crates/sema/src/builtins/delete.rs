//! `delete(@m[key])` or `delete(@m, key)`: removes one element of a map
//! and says whether it was there (true/false, as in bpftrace's current
//! release: `if (delete(@m, k)) { ... }`, `$gone = delete(@m, k)`).
//! A map something deletes from is a hash, never a one-entry array
//! (`MapInfo::array_backed`).
//!
//! Lowering: `codegen::lower::builtins::delete` (`bpf_map_delete_elem`).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "delete",
    signature: "delete(@m[key])",
    help: "removes one element of a map; true if it was there",
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
        ] => {
            cx.map_ref(m, Some(keys));
            cx.mark_deleted(m);
        }
        [
            m @ Expr {
                kind: ExprKind::Map { keys, .. },
                ..
            },
            key,
        ] if keys.is_empty() => {
            cx.map_ref(m, None);
            cx.mark_deleted(m);
            cx.check(key);
        }
        _ => cx.wrong_arg_count("a map element like `@m[key]`"),
    }
    Type::Bool
}
