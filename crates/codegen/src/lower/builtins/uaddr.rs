//! `uaddr("NAME")` (rule in `sema::builtins::uaddr`): the symbol's address,
//! found when checking, as a constant; in a position-independent binary,
//! moved by the load offset: `bpf_get_func_ip` (where the probe is in
//! memory) less where the probe was linked.

use sema::CallValue;

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Helper, Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "uaddr",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let CallValue::LoadRelative {
        linked,
        probe_linked,
    } = call.value
    else {
        return l.constant(call.constant());
    };
    let ctx = l.ctx();
    let ip = l.asm.vreg();
    l.asm
        .call(Helper::GET_FUNC_IP, &[Src::Reg(ctx)], Some(ip));
    let delta = l.constant(linked.wrapping_sub(probe_linked) as i64);
    l.asm.alu(AluOp::Add, ip, Src::Reg(delta));
    ip
}
