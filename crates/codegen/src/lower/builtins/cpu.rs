//! `cpu` (rule in `sema::builtins::cpu`): `bpf_get_smp_processor_id`.

use super::VariableLowering;
use crate::asm::{Helper, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "cpu",
    scalar: Some(scalar),
    ..VariableLowering::NONE
};

fn scalar(l: &mut Lower<'_>, _: u8) -> VReg {
    l.helper_value(Helper::GET_SMP_PROCESSOR_ID)
}
