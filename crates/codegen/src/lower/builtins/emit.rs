//! `emit()` (rule in `sema::builtins::emit`): sends the stream instance's
//! record, as `codegen::lower::streams` builds it.

use super::{CallSite, Lowering};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "emit",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, _call: &CallSite<'_>) {
    l.emit_stream_record();
}
