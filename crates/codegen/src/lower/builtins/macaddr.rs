//! `macaddr(mac)` (rule in `sema::builtins::macaddr`): 6 bytes at the
//! place, copied from a struct member or a tracepoint's array, read at an
//! address, or copied from a value the program holds.

use ktypes::FieldKind;
use sema::Type;
use sema::builtins::macaddr::{MacSource, source};

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Helper, Src};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "macaddr",
    write: Some(write),
    ..Lowering::NONE
};

/// The bytes of a MAC address.
const MAC_LEN: u32 = 6;

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, _dst: &Type) {
    let Some(arg) = call.args.first() else { return };
    let field = l
        .probe
        .fields
        .get(&arg.id)
        .and_then(|f| match f.field.kind {
            FieldKind::Array { len } if f.field.size == len => Some(f.field.clone()),
            _ => None,
        });
    let member = l.probe.members.get(&arg.id).map(|m| m.value);
    let t = l.ty(arg);
    l.set_span(arg.span);
    match source(member, field.as_ref().map(|f| f.size), &t) {
        Some(MacSource::Member) => l.member_bytes(arg, place, MAC_LEN),
        Some(MacSource::Field) => {
            let offset = field.map_or(0, |f| f.offset);
            let src = l.asm.vreg();
            let ctx = l.ctx();
            l.asm.mov(src, Src::Reg(ctx));
            l.asm.alu(AluOp::Add, src, Src::Imm(offset as i32));
            read(l, place, src);
        }
        Some(MacSource::Address) => {
            let src = l.scalar(arg);
            read(l, place, src);
        }
        Some(MacSource::Value) => {
            let (src, _) = l.mem(arg);
            l.copy(place, src, MAC_LEN);
        }
        None => l.zero(place, MAC_LEN),
    }
}

/// Reads the 6 bytes at `src` (zeros where unreadable).
fn read(l: &mut Lower<'_>, place: Place, src: crate::asm::VReg) {
    let dst = l.addr(place);
    l.checked_call(
        Helper::PROBE_READ,
        &[Src::Reg(dst), Src::Imm(MAC_LEN as i32), Src::Reg(src)],
        true,
    );
}
