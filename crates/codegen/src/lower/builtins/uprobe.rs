//! Lowering of the `struct pt_regs` builtins of user-space probes
//! (`sema::builtins::uprobe`): `argN`, `retval` and `func`. Register
//! offsets come from `abi::arch`, the one table of the machine's layout.

use abi::arch::{ARG_OFFSETS, IP_OFFSET, RETVAL_OFFSET, Register, SP_OFFSET};
use sema::Context;
use uelf::{ArgLocation, UsdtArg};

use super::super::Lower;
use crate::asm::{AluOp, Helper, Src, VReg, Width};

impl Lower<'_> {
    /// `argN`: a register or stack slot in a uprobe, a spec operand in a usdt probe.
    pub(crate) fn uprobe_arg(&mut self, n: u8) -> VReg {
        if let Some(r) = self.kernel_arg(n) {
            return r;
        }
        match &self.probe.resolved.context {
            Context::Usdt { args } => match args.get(n as usize).cloned() {
                Some(arg) => self.usdt_arg(&arg),
                None => self.zero_reg(),
            },
            _ => match ARG_OFFSETS.get(n as usize) {
                Some(&off) => self.ctx_load(off),
                None => {
                    // Arguments after the sixth are on the stack, above the return address.
                    let addr = self.ctx_load(SP_OFFSET);
                    let slot_off = 8 * (n as i32 - ARG_OFFSETS.len() as i32 + 1);
                    self.asm.alu(AluOp::Add, addr, Src::Imm(slot_off));
                    self.read_user(addr, 8, false)
                }
            },
        }
    }

    /// `retval`: `rax` at the function's return.
    pub(crate) fn uprobe_retval(&mut self) -> VReg {
        if let Some(r) = self.kernel_retval() {
            return r;
        }
        self.ctx_load(RETVAL_OFFSET)
    }

    /// The probed function's address, for `func`. Where a probe fires on
    /// the function's first instruction (kprobe, uprobe) it is the
    /// instruction pointer, which lies in the function (a symbol resolves
    /// to its name); at a return, or in a trampoline program, the
    /// instruction pointer is elsewhere and `bpf_get_func_ip` gives it, as
    /// bpftrace reads it.
    pub(crate) fn func_addr(&mut self) -> VReg {
        match &self.probe.resolved.context {
            Context::Kprobe {
                retprobe: false, ..
            }
            | Context::Uprobe {
                retprobe: false, ..
            } => self.ctx_load(IP_OFFSET),
            _ => {
                let r = self.asm.vreg();
                let ctx = self.ctx();
                self.asm
                    .call(Helper::GET_FUNC_IP, &[Src::Reg(ctx)], Some(r));
                r
            }
        }
    }

    fn zero_reg(&mut self) -> VReg {
        let r = self.asm.vreg();
        self.asm.mov(r, Src::Imm(0));
        r
    }

    /// The 64-bit slot at `offset` of `struct pt_regs`.
    pub(crate) fn ctx_load(&mut self, offset: u32) -> VReg {
        let r = self.asm.vreg();
        let ctx = self.ctx();
        self.asm.load(r, ctx, offset as i16, Width::DW);
        r
    }

    /// A register's value as the operand names it (`%eax` is the low half of `rax`).
    fn register_value(&mut self, reg: Register) -> VReg {
        let r = self.ctx_load(reg.offset);
        if reg.shift != 0 {
            self.asm.alu(AluOp::Rsh, r, Src::Imm(reg.shift as i32));
        }
        self.extend(r, reg.size, false);
        r
    }

    /// One USDT operand, normalised to 64 bits by its size and sign.
    fn usdt_arg(&mut self, arg: &UsdtArg) -> VReg {
        match arg.location {
            ArgLocation::Const(v) => {
                let r = self.asm.vreg();
                self.asm.imm64(r, v);
                self.extend(r, arg.size, arg.signed);
                r
            }
            ArgLocation::Reg(reg) => {
                let r = self.register_value(reg);
                self.extend(r, arg.size, arg.signed);
                r
            }
            ArgLocation::Mem {
                base,
                offset,
                index,
            } => {
                let addr = self.register_value(base);
                if let Some((index, scale)) = index {
                    let i = self.register_value(index);
                    let shift = scale.trailing_zeros() as i32;
                    if shift != 0 {
                        self.asm.alu(AluOp::Lsh, i, Src::Imm(shift));
                    }
                    self.asm.alu(AluOp::Add, addr, Src::Reg(i));
                }
                match i32::try_from(offset) {
                    Ok(0) => {}
                    Ok(off) => self.asm.alu(AluOp::Add, addr, Src::Imm(off)),
                    Err(_) => {
                        let off = self.asm.vreg();
                        self.asm.imm64(off, offset);
                        self.asm.alu(AluOp::Add, addr, Src::Reg(off));
                    }
                }
                self.read_user(addr, arg.size, arg.signed)
            }
        }
    }

    /// Reads `size` bytes of user memory at `addr` (0 if unreadable), extended to 64 bits.
    fn read_user(&mut self, addr: VReg, size: u8, signed: bool) -> VReg {
        let slot = self.asm.stack(8);
        let dst = self.asm.vreg();
        self.asm.stack_addr(dst, slot, 0);
        self.checked_call(
            Helper::PROBE_READ_USER,
            &[Src::Reg(dst), Src::Imm(size as i32), Src::Reg(addr)],
            true,
        );
        let r = self.asm.vreg();
        let width = Width::from_bytes(size as u32).unwrap_or(Width::DW);
        self.asm.load_stack(r, slot, 0, width);
        self.extend(r, size, signed);
        r
    }

    /// Keeps the low `size` bytes of `r`, sign- or zero-extended to 64 bits.
    fn extend(&mut self, r: VReg, size: u8, signed: bool) {
        if size >= 8 {
            return;
        }
        let bits = 64 - 8 * size as i32;
        if signed {
            self.asm.alu(AluOp::Lsh, r, Src::Imm(bits));
            self.asm.alu(AluOp::Arsh, r, Src::Imm(bits));
        } else if size == 4 {
            self.asm.mov32(r, Src::Reg(r));
        } else {
            self.asm
                .alu(AluOp::And, r, Src::Imm((1i32 << (8 * size as i32)) - 1));
        }
    }
}
