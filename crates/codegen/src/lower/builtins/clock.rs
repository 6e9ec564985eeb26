//! Clocks (rules in `sema::builtins::clock`): `nsecs` is
//! `bpf_ktime_get_ns`; `nsecs(clock)` the helper of that clock;
//! `elapsed` subtracts the start time user space stored in the globals map
//! before attaching; `jiffies` is `bpf_jiffies64`.

use super::{CallSite, Lowering, VariableLowering};
use crate::asm::{AluOp, Helper, Src, VReg};
use crate::lower::Lower;

pub(crate) const NSECS: VariableLowering = VariableLowering {
    name: "nsecs",
    scalar: Some(nsecs),
    ..VariableLowering::NONE
};

pub(crate) const ELAPSED: VariableLowering = VariableLowering {
    name: "elapsed",
    scalar: Some(elapsed),
    ..VariableLowering::NONE
};

pub(crate) const JIFFIES: VariableLowering = VariableLowering {
    name: "jiffies",
    scalar: Some(jiffies),
    ..VariableLowering::NONE
};

pub(crate) const NSECS_FN: Lowering = Lowering {
    name: "nsecs",
    scalar: Some(nsecs_of_clock),
    ..Lowering::NONE
};

/// The clock's helper, by its index in `sema::builtins::clock::CLOCKS`
/// (`sw_tai` is bpftrace's estimate for kernels before the TAI helper;
/// weft reads the TAI clock itself).
fn nsecs_of_clock(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let helper = match call.constant() {
        0 => Helper::KTIME_GET_NS,
        2 | 3 => Helper::KTIME_GET_TAI_NS,
        _ => Helper::KTIME_GET_BOOT_NS,
    };
    l.helper_value(helper)
}

fn jiffies(l: &mut Lower<'_>, _: u8) -> VReg {
    l.helper_value(Helper::JIFFIES64)
}

fn nsecs(l: &mut Lower<'_>, _: u8) -> VReg {
    l.helper_value(Helper::KTIME_GET_NS)
}

fn elapsed(l: &mut Lower<'_>, _: u8) -> VReg {
    let start = l.global(abi::GLOBAL_START_NS);
    let r = l.asm.vreg();
    l.asm.call(Helper::KTIME_GET_NS, &[], Some(r));
    l.asm.alu(AluOp::Sub, r, Src::Reg(start));
    r
}
