//! `str(ptr[, len])` (rule in `sema::builtins::str`): `bpf_probe_read_str`
//! into the value's place, zeroed first so equal strings are equal bytes; a
//! string argument is written as itself, cut to the size.
//!
//! How much is read follows bpftrace's current release:
//! - `str(p)`: up to `max_strlen` characters. A string that long fills its
//!   buffer with no NUL, which user space prints with the truncation
//!   trailer (`..`). The buffer has no room for the read's NUL, so the read
//!   stops a byte short and, only when it filled the buffer, the last byte
//!   is read on its own. From `max_strlen` = 1024 up, bpftrace reads no more
//!   than the buffer (NUL included), and neither does weft.
//! - `str(p, n)` with a literal `n` below `max_strlen`: `n` bytes, NUL
//!   included (the type has a byte to spare, so never a trailer).
//! - `str(p, len)` with a run-time `len`: at most `len` bytes, NUL included,
//!   and at most the buffer.

use sema::Type;
use syntax::ast::ExprKind;

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Cond, Helper, Src, VReg};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "str",
    write: Some(write),
    ..Lowering::NONE
};

/// From this `max_strlen` up, bpftrace reads no more than the buffer holds.
const UNPADDED_STRLEN: u32 = 1024;

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, dst: &Type) {
    let Type::Str { size } = *dst else { return };
    let Some(arg) = call.args.first() else { return };
    if l.ty(arg).is_str() {
        return l.write_string(arg, place, size);
    }
    read(l, call, place, size);
}

/// `str(p)` of an address (not of a string value): reads the string into
/// `place`, a buffer of `size` bytes, and gives the helper's result: the
/// bytes written, NUL included (`size` for a string that fills the buffer
/// without one), or a negative error, after which the buffer is all zero.
pub(crate) fn read(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, size: u32) -> VReg {
    let arg = &call.args[0];
    // The length is evaluated before the pointer, as written.
    let runtime_len = match call.args.get(1) {
        Some(len) if !matches!(len.kind, ExprKind::Int { .. }) => Some(l.scalar(len)),
        _ => None,
    };
    let src = l.scalar(arg);
    // The checker gave the call its size: `max_strlen`, or `n + 1` for a literal `n`.
    let own = match l.ty(call.expr) {
        Type::Str { size: s } => s,
        _ => size,
    };
    let cap = own.min(size);
    let max_strlen = l.typed.config.max_strlen();
    let literal_len = match call.args.get(1).map(|a| &a.kind) {
        Some(ExprKind::Int { value, .. }) => Some(*value),
        _ => None,
    };
    // The helper stops at the NUL and leaves the rest as it was.
    l.zero_range(place, 0, size);
    let addr = l.addr(place);
    match runtime_len {
        Some(len) => {
            let within = l.asm.label();
            l.asm.br(Cond::Le, len, Src::Imm(cap as i32), within);
            l.asm.mov(len, Src::Imm(cap as i32));
            l.asm.bind(within);
            l.checked_call(
                Helper::PROBE_READ_STR,
                &[Src::Reg(addr), Src::Reg(len), Src::Reg(src)],
                true,
            )
        }
        None if literal_len.is_some_and(|n| n < u64::from(max_strlen)) => {
            // `n` bytes into `n + 1`: the last stays zero.
            let n = own.saturating_sub(1).min(cap);
            l.checked_call(
                Helper::PROBE_READ_STR,
                &[Src::Reg(addr), Src::Imm(n as i32), Src::Reg(src)],
                true,
            )
        }
        None => {
            let read = l.checked_call(
                Helper::PROBE_READ_STR,
                &[Src::Reg(addr), Src::Imm(cap as i32), Src::Reg(src)],
                true,
            );
            if cap == own && own < UNPADDED_STRLEN {
                // Filled (the string has at least `cap - 1` characters): its
                // `cap`-th byte replaces the NUL, which a longer string lacks.
                let done = l.asm.label();
                l.asm.br(Cond::Ne, read, Src::Imm(cap as i32), done);
                let (to, from) = (l.addr(place.offset(cap - 1)), l.asm.vreg());
                l.asm.mov(from, Src::Reg(src));
                l.asm.alu(AluOp::Add, from, Src::Imm(cap as i32 - 1));
                l.asm.call(
                    Helper::PROBE_READ,
                    &[Src::Reg(to), Src::Imm(1), Src::Reg(from)],
                    None,
                );
                l.asm.bind(done);
            }
            read
        }
    }
}
