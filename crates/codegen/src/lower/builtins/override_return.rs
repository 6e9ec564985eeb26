//! `override(rc)` (rule in `sema::builtins::override_return`):
//! `bpf_override_return(ctx, rc)`.

use super::{CallSite, Lowering};
use crate::asm::{Helper, Src};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "override",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    let rc = l.scalar(&call.args[0]);
    let ctx = l.ctx();
    l.checked_call(Helper::OVERRIDE_RETURN, &[Src::Reg(ctx), Src::Reg(rc)], false);
}
