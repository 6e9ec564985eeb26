//! `uptr(p)`, `kptr(p)` (rules in `sema::builtins::addrspace`): the
//! pointer itself; weft's reads take either address space on x86-64.

use super::{CallSite, Lowering};
use crate::asm::VReg;
use crate::lower::Lower;

pub(crate) const UPTR: Lowering = Lowering {
    name: "uptr",
    scalar: Some(pointer),
    ..Lowering::NONE
};

pub(crate) const KPTR: Lowering = Lowering {
    name: "kptr",
    scalar: Some(pointer),
    ..Lowering::NONE
};

fn pointer(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    match call.args.first() {
        Some(p) => l.scalar(p),
        None => l.constant(0),
    }
}
