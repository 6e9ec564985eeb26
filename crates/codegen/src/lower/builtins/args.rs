//! `args` (rule in `sema::builtins::args`): `args->NAME` is a field read of
//! the context (`codegen::lower::expr`). In a uprobe, `args` is also a
//! value: a record of the function's parameters, each read from its
//! register in the context (`TypedProbe::args_fields`) and written at its
//! record offset, as the record's type stores it (64 bits, or a pointer).

use sema::Type;

use super::VariableLowering;
use crate::asm::{Src, Width};
use crate::lower::expr::field_offsets;
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "args",
    write: Some(write),
    ..VariableLowering::NONE
};

fn write(l: &mut Lower<'_>, _: u8, place: Place, dst: &Type) {
    let Type::Record(_) = dst else { return };
    let offsets = field_offsets(&dst.layout());
    let fields = l.probe.args_fields.clone();
    for (field, at) in fields.iter().zip(offsets) {
        let (width, size) = match field.size {
            1 => (Width::B, 1u8),
            2 => (Width::H, 2),
            4 => (Width::W, 4),
            _ => (Width::DW, 8),
        };
        let r = l.asm.vreg();
        let ctx = l.ctx();
        l.asm.load(r, ctx, field.offset as i16, width);
        l.normalise(r, size, field.signed);
        l.store(place.offset(at), Src::Reg(r), Width::DW);
    }
}
