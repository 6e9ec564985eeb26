//! The current task: `pid`, `tid`, `uid`, `gid`, `comm`, `curtask` and
//! `cgroup`; `pid(curr_ns | init)` and `tid(curr_ns | init)`.
//!
//! What they are: the process id (the kernel's tgid) and thread id (its
//! pid) of the task the probe fired in, its user and group ids, its name
//! (16 bytes, as `/proc/PID/comm`), the address of its `struct task_struct`
//! (members read through BTF: `curtask->real_parent->tgid`) and the id of
//! its cgroup (v2), in every probe.
//!
//! Pid namespaces: `pid` and `tid` (and `pid(curr_ns)`, `tid(curr_ns)`)
//! are the ids as seen from the pid namespace weft runs in, as in
//! bpftrace's current release: inside a container they match its
//! `/proc`, and a task outside that namespace reads as 0. `pid(init)` and
//! `tid(init)` are the ids of the initial namespace, the kernel's own.
//! Outside a nested namespace the two are the same.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat { @[pid, comm] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::task` (one helper call each;
//! `bpf_get_ns_current_pid_tgid` in a nested namespace).

use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef, VariableDef};
use crate::config::ScriptConfig;
use crate::diagnostics as diag;
use crate::providers::Context;
use crate::typed::CallValue;
use crate::types::{COMM_SIZE, Type};

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

/// `pid([curr_ns | init])`: the process id seen from weft's pid namespace
/// (the default) or from the initial one.
pub const PID_FN: FunctionDef = FunctionDef {
    name: "pid",
    signature: "pid([curr_ns | init])",
    help: "process id as seen from weft's pid namespace (curr_ns, the default) or the initial one (init)",
    check: check_namespace,
    aggregates: false,
};

/// `tid([curr_ns | init])`: the thread id, likewise.
pub const TID_FN: FunctionDef = FunctionDef {
    name: "tid",
    signature: "tid([curr_ns | init])",
    help: "thread id as seen from weft's pid namespace (curr_ns, the default) or the initial one (init)",
    check: check_namespace,
    aggregates: false,
};

/// The namespaces `pid()` and `tid()` take, in the order of the constant
/// the lowering gets.
pub const PID_NAMESPACES: [&str; 2] = ["curr_ns", "init"];

/// The lowering's constant for `init`.
pub const INIT_NAMESPACE: i64 = 1;

fn check_namespace(cx: &mut CallCheck<'_, '_>) -> Type {
    let namespace = match cx.args {
        [] => 0,
        [arg] => match &arg.kind {
            ExprKind::Ident(name) if PID_NAMESPACES.contains(&name.as_str()) => {
                PID_NAMESPACES.iter().position(|n| n == name).unwrap_or(0)
            }
            ExprKind::Ident(name) => {
                let name = name.clone();
                cx.error(diag::unknown_pid_namespace(arg.span, cx.name, &name));
                0
            }
            _ => {
                cx.check(arg);
                cx.error(diag::unknown_pid_namespace(arg.span, cx.name, ""));
                0
            }
        },
        _ => {
            // Namespace names are not expressions: nothing to check in them.
            cx.wrong_arg_count("at most one of curr_ns, init");
            0
        }
    };
    cx.set_value(CallValue::Constant(namespace as i64));
    Type::U32
}

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
