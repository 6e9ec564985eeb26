//! `strncmp(s1, s2, n)` (rule in `sema::builtins::strncmp`): 0 when the
//! strings agree in their first `n` bytes or up to a NUL both share, else 1.
//!
//! The bytes are compared one by one over the shorter string's buffer
//! (bpftrace never reads past it) or a literal `n` when smaller, as `==`
//! compares strings (`Lower::compare_bytes`: unrolled, or a loop for long
//! strings); a literal string is compared against immediates, never
//! materialised. A run-time `n` ends the comparison at the first byte it
//! does not reach.

use syntax::ast::ExprKind;

use super::{CallSite, Lowering};
use crate::asm::{Cond, Src, VReg, Width};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "strncmp",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let [first, second, n] = call.args else {
        return l.constant(0);
    };
    let mark = l.asm.stack_mark();
    // A run-time length, evaluated before the strings as written.
    let (limit, runtime_n) = match call.value {
        sema::CallValue::Constant(n) => (u32::try_from(n).unwrap_or(u32::MAX), None),
        _ => (u32::MAX, Some(l.scalar(n))),
    };
    let literal = |e: &syntax::ast::Expr| match &e.kind {
        ExprKind::Str(bytes) => Some(bytes.clone()),
        _ => None,
    };
    let out = l.asm.vreg();
    let (differ, equal, done) = (l.asm.label(), l.asm.label(), l.asm.label());
    let c = l.asm.vreg();
    match (literal(first), literal(second)) {
        (Some(a), Some(b)) => {
            // Both known: the answer is too (a run-time `n` still decides how far).
            let (a, b) = (nul_terminated(a), nul_terminated(b));
            let count = (a.len().min(b.len()) as u32).min(limit);
            for i in 0..count {
                if let Some(n) = runtime_n {
                    l.asm.br(Cond::Le, n, Src::Imm(i as i32), equal);
                }
                let (x, y) = (a[i as usize], b[i as usize]);
                if x != y {
                    l.asm.jmp(differ);
                    break;
                }
                if x == 0 {
                    break;
                }
            }
        }
        (Some(bytes), None) | (None, Some(bytes)) => {
            let other = if literal(first).is_some() {
                second
            } else {
                first
            };
            let bytes = nul_terminated(bytes);
            let (place, size) = l.mem(other);
            let count = (bytes.len() as u32).min(size).min(limit);
            for i in 0..count {
                if let Some(n) = runtime_n {
                    l.asm.br(Cond::Le, n, Src::Imm(i as i32), equal);
                }
                l.load(c, place.offset(i), Width::B);
                l.asm
                    .br(Cond::Ne, c, Src::Imm(i32::from(bytes[i as usize])), differ);
            }
        }
        (None, None) => {
            let (a, asize) = l.mem(first);
            let (b, bsize) = l.mem(second);
            let count = asize.min(bsize).min(limit);
            l.compare_bytes(a, b, count, runtime_n, differ, equal);
        }
    }
    l.asm.bind(equal);
    l.asm.mov(out, Src::Imm(0));
    l.asm.jmp(done);
    l.asm.bind(differ);
    l.asm.mov(out, Src::Imm(1));
    l.asm.bind(done);
    l.asm.stack_release(mark);
    out
}

/// A literal's bytes up to its first NUL, and that NUL.
fn nul_terminated(mut bytes: Vec<u8>) -> Vec<u8> {
    if let Some(end) = bytes.iter().position(|&b| b == 0) {
        bytes.truncate(end);
    }
    bytes.push(0);
    bytes
}
