//! `print(@m[, top[, div]])` (rule in `sema::builtins::print`): a record
//! naming the map with `top` and `div`; user space prints the map when it
//! reads the record. `print(value)`: the value in a printf record
//! (`abi::PrintfAction::Value`), which user space prints as a value.

use abi::EventKind;

use super::{CallSite, Lowering};
use crate::asm::{Src, VReg, Width};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "print",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    if let sema::CallValue::Site(site) = call.value {
        super::printf::emit_formatted(l, site, call.args);
        return;
    }
    let args = call.args;
    let id = l.map_index(&args[0]) as u32;
    let top = args.get(1).map(|a| l.scalar(a));
    let div = args.get(2).map(|a| l.scalar(a));
    l.emit_event(
        EventKind::Print,
        id,
        |l, rec| {
            let src = |r: Option<VReg>| r.map_or(Src::Imm(0), Src::Reg);
            l.asm.store(rec, 8, src(top), Width::DW);
            l.asm.store(rec, 16, src(div), Width::DW);
        },
        24,
    );
}
