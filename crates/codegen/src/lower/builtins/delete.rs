//! `delete(@m[key])` / `delete(@m, key)` (rule in `sema::builtins::delete`):
//! `bpf_map_delete_elem` with the key built as a store builds it.

use syntax::ast::{Expr, ExprKind};

use super::{CallSite, Lowering};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "delete",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    match call.args {
        [
            m @ Expr {
                kind: ExprKind::Map { keys, .. },
                ..
            },
        ] => l.map_delete(m, keys),
        [m, key] => l.map_delete(m, std::slice::from_ref(key)),
        _ => {}
    }
}
