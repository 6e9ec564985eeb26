//! `numaid` (rule in `sema::builtins::numaid`): `bpf_get_numa_node_id`.

use super::VariableLowering;
use crate::asm::{Helper, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "numaid",
    scalar: Some(scalar),
    ..VariableLowering::NONE
};

fn scalar(l: &mut Lower<'_>, _: u8) -> VReg {
    l.helper_value(Helper::GET_NUMA_NODE_ID)
}
