//! `ntop([af, ]addr)` (rule in `sema::builtins::ntop`): `family: u64`, then
//! the address in 16 bytes: an integer stored as 4 bytes, a tracepoint's
//! byte array, a struct member's or a byte array value (`pton()`) copied;
//! the family is `af`, or without it 10 (IPv6) for 16 bytes and 2 (IPv4)
//! otherwise.

use ktypes::FieldKind;
use sema::Type;

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Helper, Src, Width};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "ntop",
    write: Some(write),
    ..Lowering::NONE
};

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, _dst: &Type) {
    let args = call.args;
    let Some(addr) = args.last() else { return };
    let array = l
        .probe
        .fields
        .get(&addr.id)
        .and_then(|f| match f.field.kind {
            FieldKind::Array { len } if f.field.size == len => Some(f.field.clone()),
            _ => None,
        });
    let member_bytes = match l.probe.members.get(&addr.id).map(|m| m.value) {
        Some(sema::MemberValue::Chars { len }) => Some(len.min(16)),
        _ => None,
    };
    let addr_ty = l.ty(addr);
    let value_bytes = match (&array, member_bytes) {
        (None, None) => sema::builtins::ntop::byte_array_len(&addr_ty),
        _ => None,
    };
    let default_family = if array.as_ref().is_some_and(|f| f.size == 16)
        || member_bytes == Some(16)
        || value_bytes == Some(16)
    {
            10
        } else {
            2
        };
    match args {
        [af, _] => {
            let v = l.scalar(af);
            l.store(place, Src::Reg(v), Width::DW);
        }
        _ => l.store(place, Src::Imm(default_family), Width::DW),
    }
    l.set_span(addr.span);
    // An IPv4 address fills 4 of the 16 bytes: the rest must be zero.
    l.zero_range(place, 8, 24);
    if value_bytes.is_some() {
        // A byte array held by value (`pton()`'s, a variable's).
        l.write_into(addr, place.offset(8), &addr_ty);
        return;
    }
    if let Some(len) = member_bytes {
        let dst = place.offset(8);
        l.member_bytes(addr, dst, len);
        return;
    }
    match array {
        Some(f) => {
            // Tracepoint arrays need not be aligned for a direct load: copy them.
            let src = l.asm.vreg();
            let ctx = l.ctx();
            l.asm.mov(src, Src::Reg(ctx));
            l.asm.alu(AluOp::Add, src, Src::Imm(f.offset as i32));
            let dst = l.addr(place.offset(8));
            l.checked_call(Helper::PROBE_READ_KERNEL, &[Src::Reg(dst), Src::Imm(f.size as i32), Src::Reg(src)], true);
        }
        None => {
            let v = l.scalar(addr);
            l.store(place.offset(8), Src::Reg(v), Width::W);
        }
    }
}
