//! `signal(SIG)` (rule in `sema::builtins::signal`): `bpf_send_signal`
//! with the number the rule found, or the expression's value.

use super::{CallSite, Lowering};
use crate::asm::{Helper, Src};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "signal",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    let sig = match call.value {
        sema::CallValue::Constant(n) => l.constant(n),
        _ => l.scalar(&call.args[0]),
    };
    l.checked_call(Helper::SEND_SIGNAL, &[Src::Reg(sig)], false);
}
