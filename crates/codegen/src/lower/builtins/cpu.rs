//! `cpu` (rule in `sema::builtins::cpu`): `bpf_get_smp_processor_id`;
//! `ncpus`: the count user space wrote into the globals map at load.

use super::VariableLowering;
use crate::asm::{Helper, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "cpu",
    scalar: Some(scalar),
    ..VariableLowering::NONE
};

pub(crate) const NCPUS: VariableLowering = VariableLowering {
    name: "ncpus",
    scalar: Some(ncpus),
    ..VariableLowering::NONE
};

pub(crate) const BUILTIN_NCPUS: VariableLowering = VariableLowering {
    name: "__builtin_ncpus",
    ..NCPUS
};

fn ncpus(l: &mut Lower<'_>, _: u8) -> VReg {
    l.global(abi::GLOBAL_NCPUS)
}

fn scalar(l: &mut Lower<'_>, _: u8) -> VReg {
    l.helper_value(Helper::GET_SMP_PROCESSOR_ID)
}
