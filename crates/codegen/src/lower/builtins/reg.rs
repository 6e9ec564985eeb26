//! `reg("NAME")` (rule in `sema::builtins::reg`): one load of the register's
//! slot in the probe's `struct pt_regs`, at the offset the checker found.

use super::{CallSite, Lowering};
use crate::asm::VReg;
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "reg",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    l.ctx_load(call.constant() as u32)
}
