//! `kstack`/`ustack` and `ksym()`/`usym()` (rules in `sema::builtins::stacks`).
//!
//! A stack is `bpf_get_stackid(ctx, weft_stack_<limit>, flags)` stored as a
//! `u64` (negative when nothing was captured); a user stack adds the pid as a
//! second `u64`, which user space needs to symbolize it. A symbol is the
//! address, plus the pid for `usym`.

use sema::Type;
use syntax::ast::{Expr, ExprKind};

use super::super::{Lower, Place};
use crate::asm::{AluOp, Helper, Src, Width};

impl Lower<'_> {
    /// Writes a stack value (`dst` is a `Type::Stack`) at `place`.
    pub(crate) fn write_stack(&mut self, e: &Expr, place: Place, dst: &Type) {
        let Type::Stack { user, limit, .. } = *dst else {
            return;
        };
        if !self.captures_here(e) {
            // A variable or map value that already holds a stack.
            let (src, size) = self.mem(e);
            self.copy(place, src, size.min(dst.layout().size()));
            return;
        }
        let map = self.asm.vreg();
        self.asm.map_ptr(map, &abi::stack::stack_map_name(limit));
        let id = self.asm.vreg();
        let flags = if user {
            abi::stack::BPF_F_USER_STACK
        } else {
            0
        };
        let ctx = self.ctx;
        self.asm.call(
            Helper::GET_STACKID,
            &[Src::Reg(ctx), Src::Reg(map), Src::Imm(flags as i32)],
            Some(id),
        );
        self.store(place, Src::Reg(id), Width::DW);
        if user {
            let pid = self.current_pid();
            self.store(place.offset(8), Src::Reg(pid), Width::DW);
        }
    }

    /// Writes `ksym(addr)` / `usym(addr)` (`dst` is a `Type::Sym`) at `place`.
    pub(crate) fn write_sym(&mut self, e: &Expr, place: Place, dst: &Type) {
        let Type::Sym { user } = *dst else { return };
        let ExprKind::Call { args, .. } = &e.kind else {
            let (src, size) = self.mem(e);
            self.copy(place, src, size.min(dst.layout().size()));
            return;
        };
        let Some(addr) = args.first() else { return };
        let v = self.scalar(addr);
        self.store(place, Src::Reg(v), Width::DW);
        if user {
            let pid = self.current_pid();
            self.store(place.offset(8), Src::Reg(pid), Width::DW);
        }
    }

    /// Whether `e` is `kstack`/`ustack` itself (as opposed to a stored copy).
    fn captures_here(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Ident(_) => matches!(
                self.probe.builtins.get(&e.id),
                Some(sema::Builtin::Kstack | sema::Builtin::Ustack)
            ),
            ExprKind::Call { .. } => true,
            _ => false,
        }
    }

    fn current_pid(&mut self) -> crate::asm::VReg {
        let pid = self.asm.vreg();
        self.asm.call(Helper::GET_CURRENT_PID_TGID, &[], Some(pid));
        self.asm.alu(AluOp::Rsh, pid, Src::Imm(32));
        pid
    }
}
