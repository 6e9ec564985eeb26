//! `has_key(@m, key)` (rule in `sema::builtins::has_key`): the key built as
//! `@m[key]` builds it, `bpf_map_lookup_elem`, 1 when it found the element.

use super::{CallSite, Lowering};
use crate::asm::{Cond, Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "has_key",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let [m, key] = call.args else {
        return l.constant(0);
    };
    let index = l.map_index(m);
    let key = l.map_key(index, std::slice::from_ref(key));
    let value = l.lookup(index, key);
    let found = l.asm.vreg();
    let done = l.asm.label();
    l.asm.mov(found, Src::Imm(0));
    l.asm.br(Cond::Eq, value, Src::Imm(0), done);
    l.asm.mov(found, Src::Imm(1));
    l.asm.bind(done);
    found
}
