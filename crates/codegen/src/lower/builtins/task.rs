//! The current task (rules in `sema::builtins::task`): one helper call each;
//! `comm` is written in place by `bpf_get_current_comm`, which pads it.

use sema::Type;

use super::VariableLowering;
use crate::asm::{AluOp, Helper, Src, VReg};
use crate::lower::{Lower, Place};

pub(crate) const PID: VariableLowering = VariableLowering {
    name: "pid",
    scalar: Some(pid),
    ..VariableLowering::NONE
};

pub(crate) const TID: VariableLowering = VariableLowering {
    name: "tid",
    scalar: Some(tid),
    ..VariableLowering::NONE
};

pub(crate) const UID: VariableLowering = VariableLowering {
    name: "uid",
    scalar: Some(uid),
    ..VariableLowering::NONE
};

pub(crate) const GID: VariableLowering = VariableLowering {
    name: "gid",
    scalar: Some(gid),
    ..VariableLowering::NONE
};

pub(crate) const COMM: VariableLowering = VariableLowering {
    name: "comm",
    write: Some(comm),
    ..VariableLowering::NONE
};

pub(crate) const CURTASK: VariableLowering = VariableLowering {
    name: "curtask",
    scalar: Some(curtask),
    ..VariableLowering::NONE
};

pub(crate) const CGROUP: VariableLowering = VariableLowering {
    name: "cgroup",
    scalar: Some(cgroup),
    ..VariableLowering::NONE
};

fn pid(l: &mut Lower<'_>, _: u8) -> VReg {
    l.pid()
}

fn tid(l: &mut Lower<'_>, _: u8) -> VReg {
    l.tid()
}

fn curtask(l: &mut Lower<'_>, _: u8) -> VReg {
    l.helper_value(Helper::GET_CURRENT_TASK)
}

fn cgroup(l: &mut Lower<'_>, _: u8) -> VReg {
    l.helper_value(Helper::GET_CURRENT_CGROUP_ID)
}

fn uid(l: &mut Lower<'_>, _: u8) -> VReg {
    let r = l.helper_value(Helper::GET_CURRENT_UID_GID);
    l.asm.mov32(r, Src::Reg(r));
    r
}

fn gid(l: &mut Lower<'_>, _: u8) -> VReg {
    let r = l.helper_value(Helper::GET_CURRENT_UID_GID);
    l.asm.alu(AluOp::Rsh, r, Src::Imm(32));
    r
}

fn comm(l: &mut Lower<'_>, _: u8, place: Place, dst: &Type) {
    let Type::Str { size } = *dst else { return };
    // The helper pads what it writes with zeros (strscpy_pad).
    let addr = l.addr(place);
    let n = size.min(sema::COMM_SIZE);
    l.asm.call(
        Helper::GET_CURRENT_COMM,
        &[Src::Reg(addr), Src::Imm(n as i32)],
        None,
    );
    l.zero_range(place, n, size);
}

impl Lower<'_> {
    /// The current process id (the kernel's tgid).
    pub(crate) fn pid(&mut self) -> VReg {
        let r = self.helper_value(Helper::GET_CURRENT_PID_TGID);
        self.asm.alu(AluOp::Rsh, r, Src::Imm(32));
        r
    }

    /// The current thread id (the kernel's pid).
    pub(crate) fn tid(&mut self) -> VReg {
        let r = self.helper_value(Helper::GET_CURRENT_PID_TGID);
        self.asm.mov32(r, Src::Reg(r));
        r
    }

    /// The result of a helper that takes no arguments.
    pub(crate) fn helper_value(&mut self, helper: Helper) -> VReg {
        let r = self.asm.vreg();
        self.asm.call(helper, &[], Some(r));
        r
    }
}
