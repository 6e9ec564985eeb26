//! `len(@m)` (rule in `sema::builtins::len`): the `bpf_map_sum_elem_count`
//! kfunc (its vmlinux BTF id found when checking) called with the map's
//! pointer; the kernel keeps the count for every hash map. `len(stack)`:
//! the stack taken again by `bpf_get_stack` into a buffer of its limit of
//! frames, whose byte count (0 on an error) over 8 is the answer.

use sema::Type;

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Cond, Helper, Src, VReg};
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
    if let Type::Stack { user, limit, .. } = l.ty(m) {
        return stack_frames(l, call, user, limit);
    }
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

/// The number of frames of the current kernel or user stack, at most `limit`.
fn stack_frames(l: &mut Lower<'_>, call: &CallSite<'_>, user: bool, limit: u32) -> VReg {
    let size = limit.max(1) * 8;
    let buffer = l.value_place(size);
    let addr = l.addr(buffer);
    let ctx = l.ctx();
    let flags = if user {
        abi::stack::BPF_F_USER_STACK
    } else {
        0
    };
    let bytes = l.asm.vreg();
    l.set_span(call.expr.span);
    l.asm.call(
        Helper::GET_STACK,
        &[
            Src::Reg(ctx),
            Src::Reg(addr),
            Src::Imm(size as i32),
            Src::Imm(flags as i32),
        ],
        Some(bytes),
    );
    let done = l.asm.label();
    let captured = l.asm.label();
    l.asm.br(Cond::SGe, bytes, Src::Imm(0), captured);
    l.asm.mov(bytes, Src::Imm(0));
    l.asm.jmp(done);
    l.asm.bind(captured);
    l.asm.alu(AluOp::Rsh, bytes, Src::Imm(3));
    l.asm.bind(done);
    bytes
}
