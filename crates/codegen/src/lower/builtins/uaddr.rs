//! `uaddr("NAME")` (rule in `sema::builtins::uaddr`): the symbol's address,
//! found when checking, as a constant.

use super::{CallSite, Lowering};
use crate::asm::VReg;
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "uaddr",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    l.constant(call.constant())
}
