//! `buf(ptr[, len])` (rule in `sema::builtins::buf`): `len: u32` (at most
//! the buffer's size; a negative length too), then the bytes read from
//! `ptr` (a string or array value: its bytes where it is held).

use sema::Type;

use super::{CallSite, Lowering};
use crate::asm::{Cond, Helper, Src, Width};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "buf",
    write: Some(write),
    ..Lowering::NONE
};

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, dst: &Type) {
    let Type::Buf { size } = *dst else { return };
    let args = call.args;
    let Some(ptr) = args.first() else { return };
    let src = if l.ty(ptr).is_str() || matches!(l.ty(ptr), Type::Array { .. }) {
        // A string or array value: its bytes where it is held.
        let (at, _) = l.mem(ptr);
        l.addr(at)
    } else {
        l.scalar(ptr)
    };
    let asked = match args.get(1) {
        Some(len) => l.scalar(len),
        None => l.constant(i64::from(size)),
    };
    let len = l.asm.vreg();
    l.asm.mov(len, Src::Reg(asked));
    // Unsigned: a negative length is huge, and is cut to `size` too.
    let bounded = l.asm.label();
    l.asm.br(Cond::Le, len, Src::Imm(size as i32), bounded);
    l.asm.mov(len, Src::Imm(size as i32));
    l.asm.bind(bounded);
    l.store(place, Src::Reg(len), Width::W);
    // The bytes past `len` must be zero too (a buffer can be a map key).
    l.zero_range(place, 4, 4 + size);
    let dst = l.addr(place.offset(4));
    l.checked_call(Helper::PROBE_READ, &[Src::Reg(dst), Src::Reg(len), Src::Reg(src)], true);
}
