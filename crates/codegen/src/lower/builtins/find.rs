//! `find(@m, key, $v)` (rule in `sema::builtins::find`): the key built as
//! `@m[key]` builds it, one `bpf_map_lookup_elem`; when it finds the
//! element, its value is copied into the variable and the call is 1.

use super::{CallSite, Lowering};
use crate::asm::{Cond, Src, VReg};
use crate::lower::{Lower, Place};
use syntax::ast::ExprKind;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "find",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let [m, key, var] = call.args else {
        return l.constant(0);
    };
    let ExprKind::Var(name) = &var.kind else {
        return l.constant(0);
    };
    let index = l.map_index(m);
    let value_size = l.typed.maps[index].value.layout().size();
    let var_size = l.ty(var).layout().size();
    let key = l.map_key(index, std::slice::from_ref(key));
    let value = l.lookup(index, key);
    let found = l.asm.vreg();
    let done = l.asm.label();
    l.asm.mov(found, Src::Imm(0));
    l.asm.br(Cond::Eq, value, Src::Imm(0), done);
    if let Some(place) = l.var_place(var.id, name) {
        // A longer variable (a string kept from a longer one) holds the
        // value and zeros after it, as an assignment leaves it.
        l.copy(place, Place::Ptr(value, 0), value_size.min(var_size));
        l.zero_range(place, value_size, var_size);
    }
    l.asm.mov(found, Src::Imm(1));
    l.asm.bind(done);
    found
}
