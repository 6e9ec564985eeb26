//! `bswap(n)` (rule in `sema::builtins::bswap`): the bytes of an integer in
//! reverse order, over the width of its type (a `__be16` port swaps two
//! bytes). Built from shifts and masks, one byte at a time, so every
//! kernel's verifier takes it.

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "bswap",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let size = call.constant().clamp(1, 8) as u32;
    let value = l.scalar(&call.args[0]);
    let out = l.asm.vreg();
    l.asm.mov(out, Src::Imm(0));
    let byte = l.asm.vreg();
    for i in 0..size {
        // out = (out << 8) | ((value >> 8·i) & 0xff)
        l.asm.alu(AluOp::Lsh, out, Src::Imm(8));
        l.asm.mov(byte, Src::Reg(value));
        if i > 0 {
            l.asm.alu(AluOp::Rsh, byte, Src::Imm(8 * i as i32));
        }
        l.asm.alu(AluOp::And, byte, Src::Imm(0xff));
        l.asm.alu(AluOp::Or, out, Src::Reg(byte));
    }
    out
}
