//! `kaddr("NAME")` (rule in `sema::builtins::kaddr`): the kernel symbol's
//! address, found in /proc/kallsyms when checking, as a constant.

use super::{CallSite, Lowering};
use crate::asm::VReg;
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "kaddr",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    l.constant(call.constant())
}
