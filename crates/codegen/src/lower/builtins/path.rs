//! `path(p[, size])` (rule in `sema::builtins::path`): `bpf_d_path(p, buf,
//! size)` into the zeroed string. The verifier takes only a pointer it
//! trusts, so the argument is not read the usual way (`bpf_probe_read`,
//! which gives a plain number): each pointer of the written chain is loaded
//! straight from the context (`ctx`, a function's `args`) or from the
//! struct before it, checked against NULL (then the string stays empty),
//! and a member's address is its struct's plus the member's offset.

use sema::Type;
use syntax::ast::{Expr, ExprKind};

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Cond, Helper, Label, Src, VReg, Width};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "path",
    write: Some(write),
    ..Lowering::NONE
};

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, dst: &Type) {
    let Type::Str { size } = *dst else { return };
    let Some(p) = call.args.first() else { return };
    l.zero(place, size);
    let done = l.asm.label();
    let path = if call.constant() == 1 {
        trusted_value(l, p, done)
    } else {
        trusted_addr(l, p, done)
    };
    let buf = l.addr(place);
    let written = l.asm.vreg();
    l.set_span(call.expr.span);
    l.asm.call(
        Helper::D_PATH,
        &[Src::Reg(path), Src::Reg(buf), Src::Imm(size as i32)],
        Some(written),
    );
    // A path too long for the buffer leaves part of it written: empty it.
    l.asm.br(Cond::SGe, written, Src::Imm(0), done);
    l.zero(place, size);
    l.asm.bind(done);
}

/// The address of the struct `e` designates (`ctx.file->f_path`), as a
/// pointer the verifier trusts; NULL on the way jumps to `null`.
fn trusted_addr(l: &mut Lower<'_>, e: &Expr, null: Label) -> VReg {
    let (ExprKind::Field { expr: base, .. }, Some(access)) =
        (&e.kind, l.probe.members.get(&e.id).cloned())
    else {
        return l.scalar(e);
    };
    let addr = if access.arrow {
        trusted_value(l, base, null)
    } else {
        trusted_addr(l, base, null)
    };
    if access.offset != 0 {
        l.asm.alu(AluOp::Add, addr, Src::Imm(access.offset as i32));
    }
    addr
}

/// The pointer `e` gives (`ctx.file`, `args.file`), loaded straight from
/// the context or the struct holding it; NULL jumps to `null`.
fn trusted_value(l: &mut Lower<'_>, e: &Expr, null: Label) -> VReg {
    let value = match (&e.kind, l.probe.members.get(&e.id).cloned()) {
        (ExprKind::Field { expr: base, .. }, Some(access)) => {
            let holder = if access.arrow {
                trusted_value(l, base, null)
            } else {
                trusted_addr(l, base, null)
            };
            let value = l.asm.vreg();
            l.set_span(e.span);
            l.asm.load(value, holder, access.offset as i16, Width::DW);
            value
        }
        // `ctx` itself, a function's `args.x` (loaded from the context), a variable.
        _ => return l.scalar(e),
    };
    l.asm.br(Cond::Eq, value, Src::Imm(0), null);
    value
}
