//! `join(array[, delim])` (rule in `sema::builtins::join`): up to
//! `JOIN_MAX_ARGS` strings read through an array of pointers that ends with
//! NULL, with their count, in one record; user space joins them.

use abi::EventKind;

use super::{CallSite, Lowering};
use crate::asm::{Cond, Helper, Src, Width};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "join",
    effect: Some(effect),
    ..Lowering::NONE
};

/// `join(argv)`: up to JOIN_MAX_ARGS strings read through an array of
/// pointers that ends with NULL, with their count.
fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    let (site, array) = (call.site(), &call.args[0]);
    let base = l.scalar(array);
    let size = abi::JOIN_ARGS_OFFSET + abi::JOIN_MAX_ARGS * abi::JOIN_ARG_SIZE;
    l.emit_event(
        EventKind::Join,
        site as u32,
        |l, rec| {
            let ptr_slot = l.asm.stack(8);
            let done = l.asm.label();
            l.asm.store(rec, 8, Src::Imm(0), Width::DW);
            for i in 0..abi::JOIN_MAX_ARGS {
                let src = l.asm.vreg();
                l.asm.mov(src, Src::Reg(base));
                l.asm
                    .alu(crate::asm::AluOp::Add, src, Src::Imm(8 * i as i32));
                let dst = l.asm.vreg();
                l.asm.stack_addr(dst, ptr_slot, 0);
                l.checked_call(Helper::PROBE_READ, &[Src::Reg(dst), Src::Imm(8), Src::Reg(src)], true);
                let p = l.asm.vreg();
                l.asm.load_stack(p, ptr_slot, 0, Width::DW);
                l.asm.br(Cond::Eq, p, Src::Imm(0), done);
                let out = l.asm.vreg();
                l.asm.mov(out, Src::Reg(rec));
                l.asm.alu(
                    crate::asm::AluOp::Add,
                    out,
                    Src::Imm((abi::JOIN_ARGS_OFFSET + i * abi::JOIN_ARG_SIZE) as i32),
                );
                l.checked_call(Helper::PROBE_READ_STR, &[
                        Src::Reg(out),
                        Src::Imm(abi::JOIN_ARG_SIZE as i32),
                        Src::Reg(p),
                    ], true);
                l.asm.store(rec, 8, Src::Imm(i as i32 + 1), Width::DW);
            }
            l.asm.bind(done);
        },
        size,
    );
}
