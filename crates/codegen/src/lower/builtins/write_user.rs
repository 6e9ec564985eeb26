//! `write_user(dst, src, len)` (rule in `sema::builtins::write_user`):
//! `src` written to a stack temporary of its type, then
//! `bpf_probe_write_user(dst, &temp, len)` (`len` a constant the rule
//! checked against the value's size); 1 when the helper returned 0.

use super::{CallSite, Lowering};
use crate::asm::{Cond, Helper, Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "write_user",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let [dst, src, _] = call.args else {
        return l.constant(0);
    };
    let t = l.ty(src).stored();
    let value = l.temp(&t);
    l.write_into(src, value, &t);
    let to = l.scalar(dst);
    let from = l.addr(value);
    let ret = l.asm.vreg();
    l.asm.call(
        Helper::PROBE_WRITE_USER,
        &[Src::Reg(to), Src::Reg(from), Src::Imm(call.constant() as i32)],
        Some(ret),
    );
    let ok = l.asm.vreg();
    let done = l.asm.label();
    l.asm.mov(ok, Src::Imm(0));
    l.asm.br(Cond::Ne, ret, Src::Imm(0), done);
    l.asm.mov(ok, Src::Imm(1));
    l.asm.bind(done);
    ok
}
