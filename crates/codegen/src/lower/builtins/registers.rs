//! `arg0`..`argN`, `retval` and `func` (rules in
//! `sema::builtins::registers`): read by the probe's kind, in
//! `builtins::kprobe` (kernel probes) and `builtins::uprobe` (user probes).

use sema::Type;

use super::VariableLowering;
use crate::asm::{Src, VReg, Width};
use crate::lower::{Lower, Place};

pub(crate) const ARG: VariableLowering = VariableLowering {
    name: "arg",
    scalar: Some(arg),
    ..VariableLowering::NONE
};

pub(crate) const RETVAL: VariableLowering = VariableLowering {
    name: "retval",
    scalar: Some(retval),
    ..VariableLowering::NONE
};

pub(crate) const FUNC: VariableLowering = VariableLowering {
    name: "func",
    write: Some(func),
    ..VariableLowering::NONE
};

fn arg(l: &mut Lower<'_>, n: u8) -> VReg {
    l.uprobe_arg(n)
}

fn retval(l: &mut Lower<'_>, _: u8) -> VReg {
    l.uprobe_retval()
}

/// `func`: the probed function's address as a `ksym`/`usym` (a `usym`
/// carries the pid its address space belongs to).
fn func(l: &mut Lower<'_>, _: u8, place: Place, dst: &Type) {
    let Type::Sym { user } = *dst else { return };
    let addr = l.func_addr();
    l.store(place, Src::Reg(addr), Width::DW);
    if user {
        let pid = l.pid();
        l.store(place.offset(8), Src::Reg(pid), Width::DW);
    }
}
