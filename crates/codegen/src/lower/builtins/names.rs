//! `strerror(errno)`, `signal_name(sig)`, `syscall_name(nr)` (rules in `sema::builtins::names`):
//! the number, stored as 8 bytes; user space prints its name.

use sema::Type;

use super::{CallSite, Lowering};
use crate::asm::{Src, Width};
use crate::lower::{Lower, Place};

pub(crate) const STRERROR: Lowering = Lowering {
    name: "strerror",
    write: Some(write),
    ..Lowering::NONE
};

pub(crate) const SYSCALL_NAME: Lowering = Lowering {
    name: "syscall_name",
    write: Some(write),
    ..Lowering::NONE
};

pub(crate) const SIGNAL_NAME: Lowering = Lowering {
    name: "signal_name",
    write: Some(write),
    ..Lowering::NONE
};

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, _dst: &Type) {
    let Some(n) = call.args.first() else { return };
    let v = l.scalar(n);
    l.store(place, Src::Reg(v), Width::DW);
}
