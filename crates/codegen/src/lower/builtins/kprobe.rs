//! Lowering of the kernel probe builtins (`sema::builtins::kprobe`):
//!
//! - kprobe/kretprobe: `argN`, `retval` read the kernel's `struct pt_regs`
//!   at the offsets of `abi::arch` (the same table uprobes use); arguments
//!   after the sixth are on the kernel stack, read with `bpf_probe_read_kernel`.
//! - rawtracepoint: `argN` is the Nth u64 of the context (8-byte loads are
//!   the only ones `raw_tp` programs may do).
//! - fexit: `retval` is the u64 after the parameters, read with the width
//!   of the function's return type (rax when fexit runs as a kretprobe).
//! - kprobe running as fentry: `argN` is the Nth parameter of the u64
//!   array, read with the width of its BTF type.

use abi::arch::{ARG_OFFSETS, RETVAL_OFFSET, SP_OFFSET};
use sema::Context;
use sema::providers::FentryMode;

use super::super::Lower;
use crate::asm::{AluOp, Helper, Src, VReg, Width};

impl Lower<'_> {
    /// `argN` in a kernel probe, or `None` in other contexts.
    pub(crate) fn kernel_arg(&mut self, n: u8) -> Option<VReg> {
        match &self.probe.resolved.context {
            Context::Kprobe { .. } => Some(match ARG_OFFSETS.get(n as usize) {
                Some(&off) => self.ctx_u64(off),
                None => {
                    // Past the sixth: on the stack, above the return address.
                    let addr = self.ctx_u64(SP_OFFSET);
                    let slot_off = 8 * (n as i32 - ARG_OFFSETS.len() as i32 + 1);
                    self.asm.alu(AluOp::Add, addr, Src::Imm(slot_off));
                    self.read_kernel_u64(addr)
                }
            }),
            Context::RawTracepoint { .. } => Some(self.ctx_u64(8 * n as u32)),
            // A kprobe running as fentry: the Nth parameter, at its BTF width.
            Context::Fentry {
                mode: FentryMode::ForKprobe,
                args,
                ..
            } => {
                let f = args.fields.get(n as usize)?.clone();
                Some(self.ctx_typed(&f))
            }
            _ => None,
        }
    }

    /// A BTF-typed value at its offset of the context, at its width and sign.
    fn ctx_typed(&mut self, f: &ktypes::TpField) -> VReg {
        let r = self.asm.vreg();
        let (w, size) = match f.size {
            1 => (Width::B, 1u8),
            2 => (Width::H, 2),
            4 => (Width::W, 4),
            _ => (Width::DW, 8),
        };
        let ctx = self.ctx();
        self.asm.load(r, ctx, f.offset as i16, w);
        self.normalise(r, size, f.signed);
        r
    }

    /// `retval` in a kretprobe or fexit probe, or `None` in other contexts.
    pub(crate) fn kernel_retval(&mut self) -> Option<VReg> {
        match &self.probe.resolved.context {
            Context::Kprobe { .. } => Some(self.ctx_u64(RETVAL_OFFSET)),
            Context::Fentry { retval, .. } => {
                let f = retval.clone()?;
                Some(self.ctx_typed(&f))
            }
            _ => None,
        }
    }

    /// The 64-bit word at `offset` of the context.
    fn ctx_u64(&mut self, offset: u32) -> VReg {
        let r = self.asm.vreg();
        let ctx = self.ctx();
        self.asm.load(r, ctx, offset as i16, Width::DW);
        r
    }

    /// 8 bytes of kernel memory at `addr` (0 if unreadable).
    fn read_kernel_u64(&mut self, addr: VReg) -> VReg {
        let slot = self.asm.stack(8);
        self.asm.store_stack(slot, 0, Src::Imm(0), Width::DW);
        let dst = self.asm.vreg();
        self.asm.stack_addr(dst, slot, 0);
        self.checked_call(
            Helper::PROBE_READ_KERNEL,
            &[Src::Reg(dst), Src::Imm(8), Src::Reg(addr)],
            true,
        );
        let r = self.asm.vreg();
        self.asm.load_stack(r, slot, 0, Width::DW);
        r
    }
}
