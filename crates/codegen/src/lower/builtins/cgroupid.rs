//! `cgroupid("PATH")` (rule in `sema::builtins::cgroupid`): the cgroup's
//! id, looked up when checking, as a constant.

use super::{CallSite, Lowering};
use crate::asm::VReg;
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "cgroupid",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    l.constant(call.constant())
}
