//! `bswap(n)`: the bytes of an integer in reverse order, over the width of
//! its type (a `__be16` port swaps two bytes). Built from shifts and masks,
//! one byte at a time, so every kernel's verifier takes it.

use syntax::ast::Expr;

use super::super::Lower;
use crate::asm::{AluOp, Src, VReg};

impl Lower<'_> {
    pub(crate) fn bswap(&mut self, arg: &Expr, size: u8) -> VReg {
        let value = self.scalar(arg);
        let out = self.asm.vreg();
        self.asm.mov(out, Src::Imm(0));
        let byte = self.asm.vreg();
        for i in 0..u32::from(size.clamp(1, 8)) {
            // out = (out << 8) | ((value >> 8·i) & 0xff)
            self.asm.alu(AluOp::Lsh, out, Src::Imm(8));
            self.asm.mov(byte, Src::Reg(value));
            if i > 0 {
                self.asm.alu(AluOp::Rsh, byte, Src::Imm(8 * i as i32));
            }
            self.asm.alu(AluOp::And, byte, Src::Imm(0xff));
            self.asm.alu(AluOp::Or, out, Src::Reg(byte));
        }
        out
    }
}
