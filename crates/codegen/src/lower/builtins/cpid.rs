//! `cpid` (rule in `sema::builtins::cpid`): the `-c` command's pid, a constant.

use super::VariableLowering;
use crate::asm::VReg;
use crate::lower::Lower;

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "cpid",
    scalar: Some(scalar),
    ..VariableLowering::NONE
};

fn scalar(l: &mut Lower<'_>, _: u8) -> VReg {
    let cpid = l.typed.cpid.unwrap_or(0);
    l.constant(i64::from(cpid))
}
