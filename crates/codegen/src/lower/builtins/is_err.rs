//! `is_err(ptr)` (rule in `sema::builtins::is_err`): 1 when the value,
//! unsigned, is one of the last 4095 (`-4095` sign-extends to
//! 0xffff_ffff_ffff_f001), else 0.

use super::{CallSite, Lowering};
use crate::asm::{Cond, Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "is_err",
    scalar: Some(scalar),
    ..Lowering::NONE
};

/// `-MAX_ERRNO`: the first error pointer.
const FIRST_ERROR: i32 = -4095;

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let Some(arg) = call.args.first() else {
        return l.constant(0);
    };
    let v = l.scalar(arg);
    let is_err = l.asm.vreg();
    let done = l.asm.label();
    l.asm.mov(is_err, Src::Imm(0));
    l.asm.br(Cond::Lt, v, Src::Imm(FIRST_ERROR), done);
    l.asm.mov(is_err, Src::Imm(1));
    l.asm.bind(done);
    is_err
}
