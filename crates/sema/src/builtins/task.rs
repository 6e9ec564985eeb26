//! The current task: `pid`, `tid`, `uid`, `gid`, `comm`, `curtask` and
//! `cgroup`.
//!
//! What they are: the process id (the kernel's tgid) and thread id (its
//! pid) of the task the probe fired in, its user and group ids, its name
//! (16 bytes, as `/proc/PID/comm`), the address of its `struct task_struct`
//! (members read through BTF: `curtask->real_parent->tgid`) and the id of
//! its cgroup (v2), in every probe.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat { @[pid, comm] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::task` (one helper call each).

use super::VariableDef;
use crate::providers::Context;
use crate::types::{COMM_SIZE, Type};
use crate::config::ScriptConfig;

const fn def(name: &'static str, help: &'static str, ty: fn(&Context, u8, &ScriptConfig) -> Result<Type, &'static str>) -> VariableDef {
    VariableDef {
        name,
        numbered: false,
        help,
        ty,
    }
}

pub const PID: VariableDef = def("pid", "process id (the kernel's tgid)", u32);
pub const TID: VariableDef = def("tid", "thread id (the kernel's pid)", u32);
pub const UID: VariableDef = def("uid", "user id", u32);
pub const GID: VariableDef = def("gid", "group id", u32);
pub const COMM: VariableDef = def("comm", "the task's name (16 bytes)", comm);
pub const CURTASK: VariableDef = def("curtask", "address of the current struct task_struct", curtask);
pub const CGROUP: VariableDef = def("cgroup", "id of the task's cgroup (v2)", u64);

fn u32(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U32)
}

fn u64(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U64)
}

fn comm(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::Str { size: COMM_SIZE })
}

fn curtask(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::Pointer {
        c_type: "struct task_struct *".into(),
    })
}
