//! `ctx` (rule in `sema::builtins::ctx`): the context pointer the program
//! was called with.

use super::VariableLowering;
use crate::asm::{Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "ctx",
    scalar: Some(scalar),
    ..VariableLowering::NONE
};

fn scalar(l: &mut Lower<'_>, _: u8) -> VReg {
    let r = l.asm.vreg();
    let ctx = l.ctx();
    l.asm.mov(r, Src::Reg(ctx));
    r
}
