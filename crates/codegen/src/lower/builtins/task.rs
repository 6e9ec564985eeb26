//! The current task (rules in `sema::builtins::task`): one helper call each;
//! `comm` is written in place by `bpf_get_current_comm`, which pads it.
//! When weft runs in a nested pid namespace, `pid` and `tid` (and every pid
//! compared or kept: `-p`, `cpid`, user stacks) come from
//! `bpf_get_ns_current_pid_tgid` with that namespace's device and inode;
//! `pid(init)`/`tid(init)` always from `bpf_get_current_pid_tgid`.

use sema::Type;

use super::{CallSite, Lowering, VariableLowering};
use crate::asm::{AluOp, Helper, Src, VReg, Width};
use crate::lower::{Lower, Place};

pub(crate) const PID_FN: Lowering = Lowering {
    name: "pid",
    scalar: Some(pid_of_namespace),
    ..Lowering::NONE
};

pub(crate) const TID_FN: Lowering = Lowering {
    name: "tid",
    scalar: Some(tid_of_namespace),
    ..Lowering::NONE
};

fn pid_of_namespace(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    if call.constant() == sema::builtins::task::INIT_NAMESPACE {
        l.init_pid_tgid(true)
    } else {
        l.pid()
    }
}

fn tid_of_namespace(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    if call.constant() == sema::builtins::task::INIT_NAMESPACE {
        l.init_pid_tgid(false)
    } else {
        l.tid()
    }
}

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
    /// The current process id (the kernel's tgid), as seen from weft's pid
    /// namespace.
    pub(crate) fn pid(&mut self) -> VReg {
        match self.typed.pid_namespace {
            Some(ns) => self.namespaced_pid_tgid(ns, true),
            None => self.init_pid_tgid(true),
        }
    }

    /// The current thread id (the kernel's pid), as seen from weft's pid
    /// namespace.
    pub(crate) fn tid(&mut self) -> VReg {
        match self.typed.pid_namespace {
            Some(ns) => self.namespaced_pid_tgid(ns, false),
            None => self.init_pid_tgid(false),
        }
    }

    /// The process (`process`) or thread id in the initial pid namespace.
    fn init_pid_tgid(&mut self, process: bool) -> VReg {
        let r = self.helper_value(Helper::GET_CURRENT_PID_TGID);
        if process {
            self.asm.alu(AluOp::Rsh, r, Src::Imm(32));
        } else {
            self.asm.mov32(r, Src::Reg(r));
        }
        r
    }

    /// The process (`process`) or thread id seen from namespace `ns`: the
    /// helper fills `struct bpf_pidns_info { u32 pid; u32 tgid; }`, zeroed
    /// (so 0) for a task outside that namespace.
    fn namespaced_pid_tgid(&mut self, ns: ktypes::PidNamespace, process: bool) -> VReg {
        let info = Place::Stack(self.asm.stack(8), 0);
        let addr = self.addr(info);
        let dev = self.constant(ns.dev as i64);
        let ino = self.constant(ns.ino as i64);
        self.asm.call(
            Helper::GET_NS_CURRENT_PID_TGID,
            &[Src::Reg(dev), Src::Reg(ino), Src::Reg(addr), Src::Imm(8)],
            None,
        );
        let r = self.asm.vreg();
        self.load(r, info.offset(if process { 4 } else { 0 }), Width::W);
        r
    }

    /// The result of a helper that takes no arguments.
    pub(crate) fn helper_value(&mut self, helper: Helper) -> VReg {
        let r = self.asm.vreg();
        self.asm.call(helper, &[], Some(r));
        r
    }
}
