//! `cgroup_path(id[, filter])` (rule in `sema::builtins::cgroup_path`):
//! writes `id: u64` and the filter's index (`u64`, recorded by the rule);
//! user space finds the paths when it prints the value.

use sema::Type;

use super::{CallSite, Lowering};
use crate::asm::{Src, Width};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "cgroup_path",
    write: Some(write),
    ..Lowering::NONE
};

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, _dst: &Type) {
    let id = l.scalar(&call.args[0]);
    l.store(place, Src::Reg(id), Width::DW);
    let filter = l.constant(call.constant());
    l.store(place.offset(8), Src::Reg(filter), Width::DW);
}
