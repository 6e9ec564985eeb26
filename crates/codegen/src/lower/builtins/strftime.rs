//! `strftime(fmt, ns)` (rule in `sema::builtins::strftime`): the
//! nanoseconds as a `u64`; user space formats them in the format the
//! call's type names.

use sema::Type;

use super::{CallSite, Lowering};
use crate::asm::{Src, Width};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "strftime",
    write: Some(write),
    ..Lowering::NONE
};

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, _dst: &Type) {
    let ns = l.scalar(&call.args[1]);
    l.store(place, Src::Reg(ns), Width::DW);
}
