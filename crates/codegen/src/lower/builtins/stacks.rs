//! `kstack`/`ustack` and `ksym()`/`usym()` (rules in `sema::builtins::stacks`).
//!
//! A stack is `bpf_get_stackid(ctx, stacks_<limit>, flags)` stored as a
//! `u64` (negative when nothing was captured); a user stack adds the pid as a
//! second `u64`, which user space needs to symbolize it. A symbol is the
//! address, plus the pid for `usym`. A stack the map could not take (its
//! bucket held another stack, or the map was full) is counted in
//! `loss_counters` and reported at exit; weft never replaces a stored stack
//! (`BPF_F_REUSE_STACKID`), which would give its samples to another stack.

use sema::Type;

use super::{CallSite, Lowering, VariableLowering};
use abi::CounterIndex;

use crate::asm::{Cond, Helper, Src, Width};
use crate::lower::{Lower, Place};

pub(crate) const KSTACK_VAR: VariableLowering = VariableLowering {
    name: "kstack",
    write: Some(write_stack_variable),
    ..VariableLowering::NONE
};

pub(crate) const USTACK_VAR: VariableLowering = VariableLowering {
    name: "ustack",
    write: Some(write_stack_variable),
    ..VariableLowering::NONE
};

pub(crate) const KSTACK: Lowering = Lowering {
    name: "kstack",
    write: Some(write_stack_call),
    ..Lowering::NONE
};

pub(crate) const USTACK: Lowering = Lowering {
    name: "ustack",
    write: Some(write_stack_call),
    ..Lowering::NONE
};

pub(crate) const KSYM: Lowering = Lowering {
    name: "ksym",
    write: Some(write_sym),
    ..Lowering::NONE
};

pub(crate) const USYM: Lowering = Lowering {
    name: "usym",
    write: Some(write_sym),
    ..Lowering::NONE
};

fn write_stack_variable(l: &mut Lower<'_>, _: u8, place: Place, dst: &Type) {
    l.write_stack(place, dst);
}

fn write_stack_call(l: &mut Lower<'_>, _call: &CallSite<'_>, place: Place, dst: &Type) {
    l.write_stack(place, dst);
}

/// `ksym(addr)` / `usym(addr)` (`dst` is a `Type::Sym`) at `place`.
fn write_sym(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, dst: &Type) {
    let Type::Sym { user } = *dst else { return };
    let Some(addr) = call.args.first() else { return };
    let v = l.scalar(addr);
    l.store(place, Src::Reg(v), Width::DW);
    if user {
        let pid = l.pid();
        l.store(place.offset(8), Src::Reg(pid), Width::DW);
    }
}

impl Lower<'_> {
    /// Captures the stack `dst` (a `Type::Stack`) describes at `place`.
    pub(crate) fn write_stack(&mut self, place: Place, dst: &Type) {
        let Type::Stack { user, limit, .. } = *dst else {
            return;
        };
        let map = self.asm.vreg();
        self.asm.map_ptr(map, &abi::stack::stack_map_name(limit));
        let id = self.asm.vreg();
        let flags = if user {
            abi::stack::BPF_F_USER_STACK
        } else {
            0
        };
        let ctx = self.ctx();
        self.asm.call(
            Helper::GET_STACKID,
            &[Src::Reg(ctx), Src::Reg(map), Src::Imm(flags as i32)],
            Some(id),
        );
        self.store(place, Src::Reg(id), Width::DW);
        self.count_stack_loss(id);
        if user {
            let pid = self.pid();
            self.store(place.offset(8), Src::Reg(pid), Width::DW);
        }
    }

    /// Counts a stack `bpf_get_stackid` could not store: -EEXIST (another
    /// stack holds its bucket) and -ENOMEM (the map is full). -EFAULT is no
    /// loss: there was no stack (a kernel thread's user stack).
    fn count_stack_loss(&mut self, id: crate::asm::VReg) {
        const EEXIST: i32 = 17;
        const ENOMEM: i32 = 12;
        let done = self.asm.label();
        self.asm.br(Cond::SGe, id, Src::Imm(0), done);
        let not_collision = self.asm.label();
        self.asm.br(Cond::Ne, id, Src::Imm(-EEXIST), not_collision);
        self.count_loss(CounterIndex::StackCollision);
        self.asm.jmp(done);
        self.asm.bind(not_collision);
        self.asm.br(Cond::Ne, id, Src::Imm(-ENOMEM), done);
        self.count_loss(CounterIndex::StackMapFull);
        self.asm.bind(done);
    }
}
