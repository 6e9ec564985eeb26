//! `assert(condition, message)` (rule in `sema::builtins::assert`): when
//! the condition is zero, the error record (an `errorf` of
//! `assert failed: %s`), an exit record with code 1, and the probe returns.

use abi::EventKind;

use super::{CallSite, Lowering};
use crate::asm::{Cond, Src, Width};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "assert",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    let [condition, message] = call.args else { return };
    let holds = l.scalar(condition);
    let fine = l.asm.label();
    l.asm.br(Cond::Ne, holds, Src::Imm(0), fine);
    super::printf::emit_formatted(l, call.site(), std::slice::from_ref(message));
    // As `exit()`: probes still firing elsewhere stop here.
    l.set_global(abi::GLOBAL_EXITING, 1);
    l.emit_event(
        EventKind::Exit,
        0,
        |l, rec| l.asm.store(rec, 8, Src::Imm(1), Width::DW),
        16,
    );
    l.return_now();
    l.asm.bind(fine);
}
