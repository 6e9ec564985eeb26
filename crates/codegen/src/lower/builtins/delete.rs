//! `delete(@m[key])` / `delete(@m, key)` (rule in `sema::builtins::delete`):
//! `bpf_map_delete_elem` with the key built as a store builds it; as a
//! value, 1 when the helper found the element (it returns 0), else 0.

use syntax::ast::{Expr, ExprKind};

use super::{CallSite, Lowering};
use crate::asm::{Cond, Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "delete",
    effect: Some(effect),
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    delete(l, call);
}

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let ret = delete(l, call);
    let out = l.asm.vreg();
    let done = l.asm.label();
    l.asm.mov(out, Src::Imm(1));
    l.asm.br(Cond::Eq, ret, Src::Imm(0), done);
    l.asm.mov(out, Src::Imm(0));
    l.asm.bind(done);
    out
}

/// The helper's result register.
fn delete(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    match call.args {
        [
            m @ Expr {
                kind: ExprKind::Map { keys, .. },
                ..
            },
        ] => l.map_delete(m, keys),
        [m, key] => l.map_delete(m, std::slice::from_ref(key)),
        _ => l.constant(-1),
    }
}
