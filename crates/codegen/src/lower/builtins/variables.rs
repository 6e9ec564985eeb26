//! Built-in variables that are scalars.

use sema::Builtin;

use super::super::Lower;
use crate::asm::{AluOp, Helper, Src, VReg, Width};

impl Lower<'_> {
    pub(crate) fn builtin_scalar(&mut self, b: Builtin) -> VReg {
        let r = self.asm.vreg();
        match b {
            Builtin::Pid => {
                self.asm.call(Helper::GET_CURRENT_PID_TGID, &[], Some(r));
                self.asm.alu(AluOp::Rsh, r, Src::Imm(32));
            }
            Builtin::Tid => {
                self.asm.call(Helper::GET_CURRENT_PID_TGID, &[], Some(r));
                self.asm.mov32(r, Src::Reg(r));
            }
            Builtin::Uid => {
                self.asm.call(Helper::GET_CURRENT_UID_GID, &[], Some(r));
                self.asm.mov32(r, Src::Reg(r));
            }
            Builtin::Gid => {
                self.asm.call(Helper::GET_CURRENT_UID_GID, &[], Some(r));
                self.asm.alu(AluOp::Rsh, r, Src::Imm(32));
            }
            Builtin::Nsecs => self.asm.call(Helper::KTIME_GET_NS, &[], Some(r)),
            Builtin::Elapsed => {
                // nsecs minus the start time user space stored in the globals map.
                let key = self.asm.stack(8);
                self.asm.store_stack(key, 0, Src::Imm(0), Width::DW);
                let map = self.asm.vreg();
                self.asm.map_ptr(map, abi::GLOBALS_MAP);
                let kp = self.asm.vreg();
                self.asm.stack_addr(kp, key, 0);
                let g = self.asm.vreg();
                self.asm.call(
                    Helper::MAP_LOOKUP_ELEM,
                    &[Src::Reg(map), Src::Reg(kp)],
                    Some(g),
                );
                let start = self.asm.vreg();
                self.asm.mov(start, Src::Imm(0));
                let none = self.asm.label();
                self.asm.br(crate::asm::Cond::Eq, g, Src::Imm(0), none);
                self.asm.load(start, g, 0, Width::DW);
                self.asm.bind(none);
                self.asm.call(Helper::KTIME_GET_NS, &[], Some(r));
                self.asm.alu(AluOp::Sub, r, Src::Reg(start));
            }
            Builtin::Cpu => self.asm.call(Helper::GET_SMP_PROCESSOR_ID, &[], Some(r)),
            Builtin::Cgroup => self.asm.call(Helper::GET_CURRENT_CGROUP_ID, &[], Some(r)),
            Builtin::Curtask => self.asm.call(Helper::GET_CURRENT_TASK, &[], Some(r)),
            Builtin::Rand => self.asm.call(Helper::GET_PRANDOM_U32, &[], Some(r)),
            Builtin::Cpid => {
                let cpid = self.typed.cpid.unwrap_or(0) as i64;
                self.asm.imm64(r, cpid);
            }
            Builtin::Retval => return self.uprobe_retval(),
            Builtin::Arg(n) => return self.uprobe_arg(n),
            // Strings and `args` are not scalars; the checker keeps them out of here.
            Builtin::Comm
            | Builtin::Probe
            | Builtin::Func
            | Builtin::Args
            | Builtin::Kstack
            | Builtin::Ustack => self.asm.mov(r, Src::Imm(0)),
        }
        r
    }
}
