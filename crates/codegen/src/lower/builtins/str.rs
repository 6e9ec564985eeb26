//! `str(ptr[, len])` (rule in `sema::builtins::str`): `bpf_probe_read_str`
//! of at most the call's size into the value's place, zeroed first so equal
//! strings are equal bytes; a string argument is written as itself, cut to
//! the size.

use sema::Type;

use super::{CallSite, Lowering};
use crate::asm::{Helper, Src};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "str",
    write: Some(write),
    ..Lowering::NONE
};

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, dst: &Type) {
    let Type::Str { size } = *dst else { return };
    let Some(arg) = call.args.first() else { return };
    if l.ty(arg).is_str() {
        return l.write_string(arg, place, size);
    }
    let src = l.scalar(arg);
    // The checker gave the call its size.
    let cap = match l.ty(call.expr) {
        Type::Str { size: s } => s.min(size),
        _ => size,
    };
    // The helper stops at the NUL and leaves the rest as it was.
    l.zero_range(place, 0, size);
    let addr = l.addr(place);
    l.checked_call(Helper::PROBE_READ_STR, &[Src::Reg(addr), Src::Imm(cap as i32), Src::Reg(src)], true);
}
