//! `probetype` (rule in `sema::builtins::probetype`): the probe's type
//! name, a literal written into each program.

use sema::Type;

use super::VariableLowering;
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "probetype",
    write: Some(write),
    ..VariableLowering::NONE
};

fn write(l: &mut Lower<'_>, _: u8, place: Place, dst: &Type) {
    let Type::Str { size } = *dst else { return };
    let name = sema::builtins::probetype::probe_type_name(l.probe.resolved.provider);
    l.write_literal(name.as_bytes(), place, size);
}
