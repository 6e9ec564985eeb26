//! `usermode` (rule in `sema::builtins::usermode`): a constant where the
//! probe type decides it; for kprobes and perf events, whether the low two
//! bits of the saved `cs` (the privilege level, `struct pt_regs` on x86-64,
//! which a perf event's context begins with) are 3.

use abi::Attach;
use sema::Context;

use super::VariableLowering;
use crate::asm::{AluOp, Cond, Src, VReg, Width};
use crate::lower::Lower;

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "usermode",
    scalar: Some(scalar),
    ..VariableLowering::NONE
};

/// Offset of `cs` in x86-64's `struct pt_regs`.
const PT_REGS_CS: i16 = 17 * 8;

fn scalar(l: &mut Lower<'_>, _: u8) -> VReg {
    let resolved = &l.probe.resolved;
    let reads_regs = matches!(resolved.attach, Attach::PerfEvent { .. } | Attach::Interval { .. })
        || matches!(resolved.context, Context::Kprobe { .. });
    if !reads_regs {
        let user = matches!(resolved.attach, Attach::Begin | Attach::End)
            || matches!(
                resolved.context,
                Context::Uprobe { .. } | Context::Usdt { .. }
            );
        return l.constant(i64::from(user));
    }
    let cs = l.asm.vreg();
    let ctx = l.ctx();
    l.asm.load(cs, ctx, PT_REGS_CS, Width::DW);
    l.asm.alu(AluOp::And, cs, Src::Imm(3));
    let out = l.asm.vreg();
    let done = l.asm.label();
    l.asm.mov(out, Src::Imm(1));
    l.asm.br(Cond::Eq, cs, Src::Imm(3), done);
    l.asm.mov(out, Src::Imm(0));
    l.asm.bind(done);
    out
}
