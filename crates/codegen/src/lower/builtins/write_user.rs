//! `write_user(dst, src, len)` (rule in `sema::builtins::write_user`):
//! `src` in the program's memory (a string or array in place, an integer
//! stored at its width), `len` cut to `src`'s size so the verifier sees a
//! bounded size, then `bpf_probe_write_user`; true when it returned 0.

use sema::Type;

use super::{CallSite, Lowering};
use crate::asm::{Cond, Helper, Src, VReg};
use crate::lower::{Lower, scalar_width};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "write_user",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let [dst, src, len] = call.args else {
        return l.constant(0);
    };
    let dst = l.scalar(dst);
    let src_ty = l.ty(src);
    let (place, size) = match src_ty {
        Type::Str { .. } | Type::Array { .. } => l.mem(src),
        _ => {
            let value = l.scalar(src);
            let place = l.temp(&src_ty);
            l.store(place, Src::Reg(value), scalar_width(&src_ty));
            (place, src_ty.layout().size())
        }
    };
    let len = l.scalar(len);
    let out = l.asm.vreg();
    l.asm.mov(out, Src::Imm(0));
    let (fits, done) = (l.asm.label(), l.asm.label());
    // Nothing to write: false, as the kernel refuses a size of 0.
    l.asm.br(Cond::Eq, len, Src::Imm(0), done);
    l.asm.br(Cond::Le, len, Src::Imm(size as i32), fits);
    l.asm.mov(len, Src::Imm(size as i32));
    l.asm.bind(fits);
    let from = l.addr(place);
    let ret = l.asm.vreg();
    l.asm.call(
        Helper::PROBE_WRITE_USER,
        &[Src::Reg(dst), Src::Reg(from), Src::Reg(len)],
        Some(ret),
    );
    let failed = l.asm.label();
    l.asm.br(Cond::Ne, ret, Src::Imm(0), failed);
    l.asm.mov(out, Src::Imm(1));
    l.asm.bind(failed);
    l.asm.bind(done);
    out
}
