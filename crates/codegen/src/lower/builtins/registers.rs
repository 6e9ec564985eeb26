//! `arg0`..`argN`, `retval` and `func` (rules in
//! `sema::builtins::registers`): read by the probe's kind, in
//! `builtins::kprobe` (kernel probes) and `builtins::uprobe` (user probes).

use sema::Type;

use super::VariableLowering;
use crate::asm::VReg;
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

fn func(l: &mut Lower<'_>, _: u8, place: Place, dst: &Type) {
    let Type::Str { size } = *dst else { return };
    let name = l.uprobe_func_name();
    l.write_literal(name.as_bytes(), place, size);
}
