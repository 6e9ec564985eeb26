//! `rand` (rule in `sema::builtins::rand`): `bpf_get_prandom_u32`.

use super::VariableLowering;
use crate::asm::{Helper, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "rand",
    scalar: Some(scalar),
    ..VariableLowering::NONE
};

fn scalar(l: &mut Lower<'_>, _: u8) -> VReg {
    l.helper_value(Helper::GET_PRANDOM_U32)
}
