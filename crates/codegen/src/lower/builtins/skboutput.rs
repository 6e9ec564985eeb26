//! `skboutput(path, skb, len, offset)` (rule in `sema::builtins::skboutput`,
//! which gave the call its destination's index): a record header on the
//! stack (`abi::EventKind::SkbOutput`, the index, the boot-clock time, the
//! length), then `bpf_skb_output(skb, SKB_MAP, len << 32 | BPF_F_CURRENT_CPU,
//! &header, 24)`: the kernel appends the packet's first `len` bytes to the header in
//! this CPU's perf buffer. `skb` is passed as read, so the verifier still
//! knows it is an `sk_buff`.

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Helper, Src, VReg, Width};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "skboutput",
    scalar: Some(scalar),
    ..Lowering::NONE
};

/// `BPF_F_CURRENT_CPU`: the perf buffer of the CPU the program runs on.
const CURRENT_CPU: i64 = 0xffff_ffff;

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let skb = l.scalar(&call.args[1]);
    let len = l.scalar(&call.args[2]);
    let header = l.asm.stack(abi::SKB_PACKET_OFFSET);
    l.asm.store_stack(
        header,
        0,
        Src::Imm(abi::EventKind::SkbOutput as i32),
        Width::W,
    );
    l.asm
        .store_stack(header, 4, Src::Imm(call.site() as i32), Width::W);
    let now = l.helper_value(Helper::KTIME_GET_BOOT_NS);
    l.asm.store_stack(header, 8, Src::Reg(now), Width::DW);
    // The length to copy goes in the flags' upper 32 bits.
    l.asm.alu(AluOp::Lsh, len, Src::Imm(32));
    let flags = l.asm.vreg();
    l.asm.mov(flags, Src::Reg(len));
    l.asm.alu(AluOp::Rsh, len, Src::Imm(32));
    l.asm.store_stack(header, 16, Src::Reg(len), Width::DW);
    let cpu = l.constant(CURRENT_CPU);
    l.asm.alu(AluOp::Or, flags, Src::Reg(cpu));
    let map = l.asm.vreg();
    l.asm.map_ptr(map, abi::SKB_MAP);
    let data = l.asm.vreg();
    l.asm.stack_addr(data, header, 0);
    let ret = l.asm.vreg();
    l.asm.call(
        Helper::SKB_OUTPUT,
        &[
            Src::Reg(skb),
            Src::Reg(map),
            Src::Reg(flags),
            Src::Reg(data),
            Src::Imm(abi::SKB_PACKET_OFFSET as i32),
        ],
        Some(ret),
    );
    ret
}
