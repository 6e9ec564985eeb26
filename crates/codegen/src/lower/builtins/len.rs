//! `len(@m)` (rule in `sema::builtins::len`): the `bpf_map_sum_elem_count`
//! kfunc (its vmlinux BTF id found when checking) called with the map's
//! pointer; the kernel keeps the count for every hash map.

use super::{CallSite, Lowering};
use crate::asm::{Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "len",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let Some(m) = call.args.first() else {
        return l.constant(0);
    };
    let index = l.map_index(m);
    let map = l.asm.vreg();
    let symbol = l.maps[index].bpf_name.clone();
    l.asm.map_ptr(map, &symbol);
    let count = l.asm.vreg();
    l.set_span(call.expr.span);
    l.asm
        .call_kfunc(call.constant() as u32, &[Src::Reg(map)], Some(count));
    count
}
