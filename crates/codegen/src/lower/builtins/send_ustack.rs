//! `send_ustack([top])` (rule in `sema::builtins::send_ustack`): the task's
//! user registers from `bpf_task_pt_regs` (saved at its kernel entry, so a
//! sample taken in the kernel has them too) and its stack from sp up, built
//! in the scratch buffer and sent with `bpf_ringbuf_output` at the length
//! copied, so a shallow stack costs the ring buffer only its depth.
//!
//! The length: `top - sp` when `top` is above sp and within
//! `USTACK_COPY_MAX` (the copy is then complete), else `USTACK_COPY_MAX`;
//! a read that faults (the thread's stack ends sooner) is tried again at a
//! half and a quarter of that, then to the end of sp's page.

use abi::stack::{USTACK_COMPLETE, USTACK_COPY_MAX, UserStackCopy};
use abi::{CounterIndex, EventKind};

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Cond, Helper, Src, Width};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "send_ustack",
    effect: Some(effect),
    ..Lowering::NONE
};

/// `struct pt_regs` offsets on x86-64.
const PT_REGS_BP: i16 = 32;
const PT_REGS_IP: i16 = 128;
const PT_REGS_SP: i16 = 152;

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    let top = call.args.first().map(|a| l.scalar(a));
    let size = UserStackCopy::BYTES as u32 + USTACK_COPY_MAX;
    let Place::Ptr(base, at) = l.value_place(size) else {
        // The buffer is larger than any stack slot: always the scratch buffer.
        return;
    };
    let buf = l.asm.vreg();
    l.asm.mov(buf, Src::Reg(base));
    l.asm.alu(AluOp::Add, buf, Src::Imm(at));

    let task = l.asm.vreg();
    l.asm.call(Helper::GET_CURRENT_TASK_BTF, &[], Some(task));
    let regs = l.asm.vreg();
    l.asm
        .call(Helper::TASK_PT_REGS, &[Src::Reg(task)], Some(regs));
    let (ip, sp, bp) = (l.asm.vreg(), l.asm.vreg(), l.asm.vreg());
    l.asm.load(ip, regs, PT_REGS_IP, Width::DW);
    l.asm.load(sp, regs, PT_REGS_SP, Width::DW);
    l.asm.load(bp, regs, PT_REGS_BP, Width::DW);
    l.asm.store(buf, 0, Src::Imm(EventKind::UserStack as i32), Width::W);
    l.asm.store(buf, 4, Src::Imm(0), Width::W);
    l.asm
        .store(buf, UserStackCopy::IP as i16, Src::Reg(ip), Width::DW);
    l.asm
        .store(buf, UserStackCopy::SP as i16, Src::Reg(sp), Width::DW);
    l.asm
        .store(buf, UserStackCopy::BP as i16, Src::Reg(bp), Width::DW);
    let tid = l.tid();
    l.asm
        .store(buf, UserStackCopy::TID as i16, Src::Reg(tid), Width::W);
    let pid = l.pid();
    l.asm
        .store(buf, UserStackCopy::PID as i16, Src::Reg(pid), Width::W);

    let len = l.asm.vreg();
    let flags = l.asm.vreg();
    l.asm.mov(len, Src::Imm(0));
    l.asm.mov(flags, Src::Imm(0));
    let send = l.asm.label();
    // A kernel thread has no user stack.
    l.asm.br(Cond::Eq, sp, Src::Imm(0), send);
    l.asm.mov(len, Src::Imm(USTACK_COPY_MAX as i32));
    if let Some(top) = top {
        let depth = l.asm.vreg();
        l.asm.mov(depth, Src::Reg(top));
        l.asm.alu(AluOp::Sub, depth, Src::Reg(sp));
        let full = l.asm.label();
        // Unsigned: a top below sp wraps to a huge depth.
        l.asm.br(Cond::Eq, depth, Src::Imm(0), full);
        l.asm
            .br(Cond::Gt, depth, Src::Imm(USTACK_COPY_MAX as i32), full);
        l.asm.mov(len, Src::Reg(depth));
        l.asm.mov(flags, Src::Imm(USTACK_COMPLETE as i32));
        l.asm.bind(full);
    }
    let dst = l.asm.vreg();
    l.asm.mov(dst, Src::Reg(buf));
    l.asm.alu(AluOp::Add, dst, Src::Imm(UserStackCopy::BYTES as i32));
    let read = |l: &mut Lower<'_>, len: Src| {
        let r = l.asm.vreg();
        l.asm.call(
            Helper::PROBE_READ_USER,
            &[Src::Reg(dst), len, Src::Reg(sp)],
            Some(r),
        );
        r
    };
    let r = read(l, Src::Reg(len));
    l.asm.br(Cond::Eq, r, Src::Imm(0), send);
    l.asm.mov(flags, Src::Imm(0));
    for part in [USTACK_COPY_MAX / 2, USTACK_COPY_MAX / 4] {
        l.asm.mov(len, Src::Imm(part as i32));
        let r = read(l, Src::Reg(len));
        l.asm.br(Cond::Eq, r, Src::Imm(0), send);
    }
    // To the end of sp's page: 1 to 4096 bytes.
    l.asm.mov(len, Src::Reg(sp));
    l.asm.alu(AluOp::And, len, Src::Imm(4095));
    let rest = l.asm.vreg();
    l.asm.mov(rest, Src::Imm(4096));
    l.asm.alu(AluOp::Sub, rest, Src::Reg(len));
    l.asm.mov(len, Src::Reg(rest));
    let r = read(l, Src::Reg(len));
    l.asm.br(Cond::Eq, r, Src::Imm(0), send);
    l.asm.mov(len, Src::Imm(0));
    l.asm.bind(send);
    l.asm
        .store(buf, UserStackCopy::LEN as i16, Src::Reg(len), Width::W);
    l.asm
        .store(buf, UserStackCopy::FLAGS as i16, Src::Reg(flags), Width::W);
    let total = l.asm.vreg();
    l.asm.mov(total, Src::Reg(len));
    l.asm
        .alu(AluOp::Add, total, Src::Imm(UserStackCopy::BYTES as i32));
    let map = l.asm.vreg();
    l.asm.map_ptr(map, abi::EVENTS_MAP);
    let sent = l.asm.vreg();
    l.asm.call(
        Helper::RINGBUF_OUTPUT,
        &[Src::Reg(map), Src::Reg(buf), Src::Reg(total), Src::Imm(0)],
        Some(sent),
    );
    let done = l.asm.label();
    l.asm.br(Cond::Eq, sent, Src::Imm(0), done);
    l.count_loss(CounterIndex::RingbufFull);
    l.asm.bind(done);
}
