//! `strcontains(haystack, needle)` (rule in `sema::builtins::strcontains`):
//! 1 when the needle occurs in the haystack, else 0.
//!
//! Each length is counted by the kernel (see [`string_length`]; the
//! haystack's while it is copied where the needle's buffer may run past its
//! end, so no read needs a bounds check). The starts of the haystack are tried by `bpf_loop`, as many as there are
//! places for the needle before the haystack's NUL, so the work follows
//! the strings' lengths, not their buffers' (1 KiB at the default
//! `max_strlen`), and the verifier walks the callback once. The callback
//! compares the needle's bytes at one start without branching on them
//! (the bytes that differ OR-ed together over the needle's length, masked
//! arithmetically), so it stays one path for the verifier; it stops the
//! loop at the first match.

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Asm, Cond, Helper, Src, VReg, Width};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "strcontains",
    scalar: Some(scalar),
    ..Lowering::NONE
};

/// The loop's context on the caller's stack: the haystack, the needle,
/// the needle's length, and the answer the callback leaves.
const HAY_WORD: i16 = 0;
const NEEDLE_WORD: i16 = 8;
const NEEDLE_LEN_WORD: i16 = 16;
const FOUND_WORD: i16 = 24;
const CONTEXT_SIZE: u32 = 32;

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    // The strings' temporaries are free again once the answer is in a register.
    let mark = l.asm.stack_mark();
    let (hay_place, hay_size) = l.mem_up_to_nul(&call.args[0]);
    let (needle_place, needle_size) = l.mem_up_to_nul(&call.args[1]);
    let needle_len = string_length(l, needle_place, needle_size);
    let needle = l.addr(needle_place);
    // The haystack copied where the needle's buffer can run past its end
    // (what is there is never compared, only read), counted as it is copied.
    let copy = l.value_place(hay_size + needle_size);
    let (hay, from) = (l.addr(copy), l.addr(hay_place));
    let hay_len = counted_copy(l, hay, from, hay_size);

    let name = format!(
        "{}_strcontains{}",
        l.program_name,
        l.subprograms.len() + 1
    );
    l.subprograms
        .push((name.clone(), callback(hay_size, needle_size)));

    let context = l.asm.stack(CONTEXT_SIZE);
    l.asm.store_stack(context, HAY_WORD, Src::Reg(hay), Width::DW);
    l.asm
        .store_stack(context, NEEDLE_WORD, Src::Reg(needle), Width::DW);
    l.asm
        .store_stack(context, NEEDLE_LEN_WORD, Src::Reg(needle_len), Width::DW);
    l.asm.store_stack(context, FOUND_WORD, Src::Imm(0), Width::DW);
    // The starts where the needle fits before the haystack's NUL.
    let starts = l.asm.vreg();
    let skip = l.asm.label();
    l.asm.br(Cond::Gt, needle_len, Src::Reg(hay_len), skip);
    l.asm.mov(starts, Src::Reg(hay_len));
    l.asm.alu(AluOp::Sub, starts, Src::Reg(needle_len));
    l.asm.alu(AluOp::Add, starts, Src::Imm(1));
    let func = l.asm.vreg();
    l.asm.func_addr(func, &name);
    let context_ptr = l.asm.vreg();
    l.asm.stack_addr(context_ptr, context, 0);
    l.asm.call(
        Helper::LOOP,
        &[
            Src::Reg(starts),
            Src::Reg(func),
            Src::Reg(context_ptr),
            Src::Imm(0),
        ],
        None,
    );
    l.asm.bind(skip);
    let out = l.asm.vreg();
    l.asm.load_stack(out, context, FOUND_WORD, Width::DW);
    l.asm.stack_release(mark);
    out
}

/// Copies the string at `from` (a buffer of `size` bytes) to `to` up to its
/// NUL and gives its length (`size` when it has no NUL: its last byte is
/// copied too).
fn counted_copy(l: &mut Lower<'_>, to: VReg, from: VReg, size: u32) -> VReg {
    let len = l.asm.vreg();
    l.asm.call(
        Helper::PROBE_READ_KERNEL_STR,
        &[Src::Reg(to), Src::Imm(size as i32), Src::Reg(from)],
        Some(len),
    );
    let (counted, done) = (l.asm.label(), l.asm.label());
    l.asm.br(Cond::SGt, len, Src::Imm(0), counted);
    l.asm.mov(len, Src::Imm(1));
    l.asm.bind(counted);
    l.asm.alu(AluOp::Sub, len, Src::Imm(1));
    l.asm.br(Cond::Ne, len, Src::Imm(size as i32 - 1), done);
    let (last, t) = (l.asm.vreg(), l.asm.vreg());
    l.asm.mov(t, Src::Reg(from));
    l.asm.alu(AluOp::Add, t, Src::Imm(size as i32 - 1));
    l.asm.load(last, t, 0, Width::B);
    l.asm.mov(t, Src::Reg(to));
    l.asm.alu(AluOp::Add, t, Src::Imm(size as i32 - 1));
    l.asm.store(t, 0, Src::Reg(last), Width::B);
    l.asm.br(Cond::Eq, last, Src::Imm(0), done);
    l.asm.mov(len, Src::Imm(size as i32));
    l.asm.bind(done);
    len
}

/// The loop's callback `(start, context)`: 1 (stop) with the answer set
/// when the needle is at `start`, else 0.
fn callback(hay_size: u32, needle_size: u32) -> Asm {
    let mut asm = Asm::with_params(2);
    let (i, context) = (asm.param(0), asm.param(1));
    let [hay, needle, needle_len, j, c, d, t, differ] = [(); 8].map(|_| asm.vreg());
    let inner_start = asm.label();
    // Never past the haystack (the loop counts fewer starts): said once so
    // that the verifier knows every read below is inside the copy.
    let (inner, compared, next) = (asm.label(), asm.label(), asm.label());
    asm.br(Cond::Lt, i, Src::Imm(hay_size as i32), inner_start);
    asm.ret(Src::Imm(1));
    asm.bind(inner_start);
    asm.load(hay, context, HAY_WORD, Width::DW);
    asm.alu(AluOp::Add, hay, Src::Reg(i));
    asm.load(needle, context, NEEDLE_WORD, Width::DW);
    asm.load(needle_len, context, NEEDLE_LEN_WORD, Width::DW);
    asm.mov(differ, Src::Imm(0));
    asm.mov(j, Src::Imm(0));
    asm.bind(inner);
    asm.br(Cond::Ge, j, Src::Imm(needle_size as i32), compared);
    asm.mov(t, Src::Reg(needle));
    asm.alu(AluOp::Add, t, Src::Reg(j));
    asm.load(d, t, 0, Width::B);
    asm.mov(t, Src::Reg(hay));
    asm.alu(AluOp::Add, t, Src::Reg(j));
    asm.load(c, t, 0, Width::B);
    asm.alu(AluOp::Xor, c, Src::Reg(d));
    // All ones while j < needle_len, else 0: the sign of j - needle_len.
    asm.mov(t, Src::Reg(j));
    asm.alu(AluOp::Sub, t, Src::Reg(needle_len));
    asm.alu(AluOp::Arsh, t, Src::Imm(63));
    asm.alu(AluOp::And, c, Src::Reg(t));
    asm.alu(AluOp::Or, differ, Src::Reg(c));
    asm.alu(AluOp::Add, j, Src::Imm(1));
    asm.jmp(inner);
    asm.bind(compared);
    asm.br(Cond::Ne, differ, Src::Imm(0), next);
    asm.store(context, FOUND_WORD, Src::Imm(1), Width::DW);
    asm.ret(Src::Imm(1));
    asm.bind(next);
    asm.ret(Src::Imm(0));
    asm
}

/// The number of bytes before the first NUL of the `size` bytes at
/// `place` (`size` without one), also `strlen()`'s: counted by the kernel,
/// `bpf_probe_read_kernel_str` copying the string onto itself (the same
/// bytes), which stops at the NUL, so the cost follows the string's length
/// and the verifier sees no loop. Without a NUL the copy writes one over
/// the last byte, which is put back.
pub(crate) fn string_length(l: &mut Lower<'_>, place: Place, size: u32) -> VReg {
    let len = l.asm.vreg();
    if size == 0 {
        l.asm.mov(len, Src::Imm(0));
        return len;
    }
    let (at, end, last) = (l.addr(place), l.asm.vreg(), l.asm.vreg());
    l.asm.mov(end, Src::Reg(at));
    l.asm.alu(AluOp::Add, end, Src::Imm(size as i32 - 1));
    l.asm.load(last, end, 0, Width::B);
    l.asm.call(
        Helper::PROBE_READ_KERNEL_STR,
        &[Src::Reg(at), Src::Imm(size as i32), Src::Reg(at)],
        Some(len),
    );
    l.asm.store(end, 0, Src::Reg(last), Width::B);
    // The bytes copied, NUL included: one more than the length, or `size`
    // with no NUL (the last byte not one).
    let (counted, done) = (l.asm.label(), l.asm.label());
    l.asm.br(Cond::SGt, len, Src::Imm(0), counted);
    l.asm.mov(len, Src::Imm(1));
    l.asm.bind(counted);
    l.asm.alu(AluOp::Sub, len, Src::Imm(1));
    l.asm.br(Cond::Ne, len, Src::Imm(size as i32 - 1), done);
    l.asm.br(Cond::Eq, last, Src::Imm(0), done);
    l.asm.mov(len, Src::Imm(size as i32));
    l.asm.bind(done);
    len
}
