//! `probe` (rule in `sema::builtins::probe`): the probe's full name, a
//! literal written into each program.

use sema::Type;

use super::VariableLowering;
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "probe",
    write: Some(write),
    ..VariableLowering::NONE
};

fn write(l: &mut Lower<'_>, _: u8, place: Place, dst: &Type) {
    let Type::Str { size } = *dst else { return };
    let name = l.probe.resolved.name.clone();
    l.write_literal(name.as_bytes(), place, size);
}
