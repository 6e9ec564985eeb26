//! `percpu_kaddr("NAME"[, cpu])` (rule in `sema::builtins::percpu_kaddr`,
//! which recorded the variable's vmlinux BTF id): the variable's address as
//! a `BPF_PSEUDO_BTF_ID` `ld_imm64`, then `bpf_this_cpu_ptr(var)` or
//! `bpf_per_cpu_ptr(var, cpu)` (NULL past the last CPU). The verifier
//! forbids arithmetic on a pointer that may be NULL, so the result of
//! `bpf_per_cpu_ptr` is checked here: a member of it then reads (from
//! address 0 past the last CPU, which gives 0) without the script checking.

use super::{CallSite, Lowering};
use crate::asm::{Cond, Helper, Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "percpu_kaddr",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let cpu = call.args.get(1).map(|c| l.scalar(c));
    let var = l.asm.vreg();
    l.asm.btf_var_addr(var, call.constant() as u32);
    let ptr = l.asm.vreg();
    let Some(cpu) = cpu else {
        l.asm.call(Helper::THIS_CPU_PTR, &[Src::Reg(var)], Some(ptr));
        return ptr;
    };
    l.asm.call(
        Helper::PER_CPU_PTR,
        &[Src::Reg(var), Src::Reg(cpu)],
        Some(ptr),
    );
    let checked = l.asm.vreg();
    let done = l.asm.label();
    l.asm.mov(checked, Src::Imm(0));
    l.asm.br(Cond::Eq, ptr, Src::Imm(0), done);
    l.asm.mov(checked, Src::Reg(ptr));
    l.asm.bind(done);
    checked
}
