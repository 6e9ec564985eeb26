//! `clear(@m)` and `zero(@m)` (rules in `sema::builtins::clear`): a record
//! naming the map; user space clears or zeroes it when it reads the record.

use abi::EventKind;

use super::{CallSite, Lowering};
use crate::lower::Lower;

pub(crate) const CLEAR: Lowering = Lowering {
    name: "clear",
    effect: Some(clear),
    ..Lowering::NONE
};

pub(crate) const ZERO: Lowering = Lowering {
    name: "zero",
    effect: Some(zero),
    ..Lowering::NONE
};

fn clear(l: &mut Lower<'_>, call: &CallSite<'_>) {
    let id = l.map_index(&call.args[0]) as u32;
    l.emit_event(EventKind::Clear, id, |_, _| {}, 8);
}

fn zero(l: &mut Lower<'_>, call: &CallSite<'_>) {
    let id = l.map_index(&call.args[0]) as u32;
    l.emit_event(EventKind::Zero, id, |_, _| {}, 8);
}
