//! `strlen(s)` (rule in `sema::builtins::strlen`): the bytes before the
//! first NUL, counted as `strcontains` counts its strings' lengths.

use super::{CallSite, Lowering};
use crate::asm::VReg;
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "strlen",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let mark = l.asm.stack_mark();
    let (at, size) = l.mem_up_to_nul(&call.args[0]);
    let len = super::strcontains::string_length(l, at, size);
    l.asm.stack_release(mark);
    len
}
