//! `exit([code])` (rule in `sema::builtins::exit`): an exit record carrying
//! the code (0 without one) for user space, then the probe returns.

use abi::EventKind;

use super::{CallSite, Lowering};
use crate::asm::{Src, Width};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "exit",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    // Evaluated before the record is reserved: no helper call runs while
    // it is held.
    let code = call.args.first().map(|c| l.scalar(c));
    // Probes still firing elsewhere stop here (`exit_guard_prologue`).
    l.set_global(abi::GLOBAL_EXITING, 1);
    l.emit_event(
        EventKind::Exit,
        0,
        |l, rec| {
            let value = code.map_or(Src::Imm(0), Src::Reg);
            l.asm.store(rec, 8, value, Width::DW);
        },
        16,
    );
    l.return_now();
}
