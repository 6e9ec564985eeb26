//! `strcontains(haystack, needle)` (rule in `sema::builtins::strcontains`):
//! 1 when the needle occurs in the haystack, else 0.
//!
//! Loops rather than unrolled compares, so the program stays small (about
//! 50 instructions for any lengths), shaped for the verifier: it walks
//! every iteration of a loop whose counters are constants it tracks, and
//! each branch on the strings' bytes would leave it a path to walk later,
//! so the loops branch on nothing but their counters. Each length comes
//! from counting the bytes before the first NUL without a branch; for each
//! start `i` of the haystack (while the needle still fits before the
//! haystack's NUL), the bytes that differ are OR-ed together over the
//! needle's length, masked arithmetically; a start whose OR is zero is a
//! match. Two 64-byte strings cost the verifier about 40,000 instructions,
//! two 200-byte ones about 400,000 (its limit is a million).

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Cond, Src, VReg, Width};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "strcontains",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    // The strings' temporaries are free again once the answer is in a register.
    let mark = l.asm.stack_mark();
    let (hay, hay_size) = l.mem(&call.args[0]);
    let (needle, needle_size) = l.mem(&call.args[1]);
    let hay = l.addr(hay);
    let needle = l.addr(needle);
    let hay_len = string_length(l, hay, hay_size);
    let needle_len = string_length(l, needle, needle_size);

    let out = l.asm.vreg();
    let [i, j, k, c, d, t, differ] = [(); 7].map(|_| l.asm.vreg());
    let [outer, inner, past_hay, found, absent, done] = [(); 6].map(|_| l.asm.label());
    l.asm.mov(i, Src::Imm(0));
    l.asm.bind(outer);
    // A start from which the needle runs past the haystack's NUL: none
    // further on can match either.
    l.asm.br(Cond::Ge, i, Src::Imm(hay_size as i32), absent);
    l.asm.mov(t, Src::Reg(i));
    l.asm.alu(AluOp::Add, t, Src::Reg(needle_len));
    l.asm.br(Cond::Gt, t, Src::Reg(hay_len), absent);
    l.asm.mov(differ, Src::Imm(0));
    l.asm.mov(j, Src::Imm(0));
    l.asm.bind(inner);
    l.asm.br(Cond::Ge, j, Src::Imm(needle_size as i32), past_hay);
    l.asm.mov(t, Src::Reg(needle));
    l.asm.alu(AluOp::Add, t, Src::Reg(j));
    l.asm.load(d, t, 0, Width::B);
    // The haystack's byte, or 0 past its end (the verifier knows `k`).
    l.asm.mov(c, Src::Imm(0));
    l.asm.mov(k, Src::Reg(i));
    l.asm.alu(AluOp::Add, k, Src::Reg(j));
    let beyond = l.asm.label();
    l.asm.br(Cond::Ge, k, Src::Imm(hay_size as i32), beyond);
    l.asm.mov(t, Src::Reg(hay));
    l.asm.alu(AluOp::Add, t, Src::Reg(k));
    l.asm.load(c, t, 0, Width::B);
    l.asm.bind(beyond);
    l.asm.alu(AluOp::Xor, c, Src::Reg(d));
    // All ones while j < needle_len, else 0: the sign of j - needle_len.
    l.asm.mov(t, Src::Reg(j));
    l.asm.alu(AluOp::Sub, t, Src::Reg(needle_len));
    l.asm.alu(AluOp::Arsh, t, Src::Imm(63));
    l.asm.alu(AluOp::And, c, Src::Reg(t));
    l.asm.alu(AluOp::Or, differ, Src::Reg(c));
    l.asm.alu(AluOp::Add, j, Src::Imm(1));
    l.asm.jmp(inner);
    l.asm.bind(past_hay);
    l.asm.br(Cond::Eq, differ, Src::Imm(0), found);
    l.asm.alu(AluOp::Add, i, Src::Imm(1));
    l.asm.jmp(outer);
    l.asm.bind(found);
    l.asm.mov(out, Src::Imm(1));
    l.asm.jmp(done);
    l.asm.bind(absent);
    l.asm.mov(out, Src::Imm(0));
    l.asm.bind(done);
    l.asm.stack_release(mark);
    out
}

/// The number of bytes before the first NUL of the `size` bytes at `at`
/// (`size` without one), counted without branching on the bytes (also
/// `strlen()`'s).
pub(crate) fn string_length(l: &mut Lower<'_>, at: VReg, size: u32) -> VReg {
    let [len, seen, j, p, b] = [(); 5].map(|_| l.asm.vreg());
    let (top, end) = (l.asm.label(), l.asm.label());
    l.asm.mov(len, Src::Imm(0));
    l.asm.mov(seen, Src::Imm(0));
    l.asm.mov(j, Src::Imm(0));
    l.asm.bind(top);
    l.asm.br(Cond::Ge, j, Src::Imm(size as i32), end);
    l.asm.mov(p, Src::Reg(at));
    l.asm.alu(AluOp::Add, p, Src::Reg(j));
    l.asm.load(b, p, 0, Width::B);
    // 1 for a NUL: a byte minus one is negative only for 0.
    l.asm.alu(AluOp::Sub, b, Src::Imm(1));
    l.asm.alu(AluOp::Rsh, b, Src::Imm(63));
    l.asm.alu(AluOp::Or, seen, Src::Reg(b));
    l.asm.alu(AluOp::Add, len, Src::Imm(1));
    l.asm.alu(AluOp::Sub, len, Src::Reg(seen));
    l.asm.alu(AluOp::Add, j, Src::Imm(1));
    l.asm.jmp(top);
    l.asm.bind(end);
    len
}
