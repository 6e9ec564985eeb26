//! Built-in variables (`pid`, `comm`, `nsecs`, ...).

use crate::providers::Context;
use crate::types::{COMM_SIZE, Type};

/// A built-in variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// Process id (the kernel's tgid) of the current task.
    Pid,
    /// Thread id (the kernel's pid) of the current task.
    Tid,
    /// User id of the current task.
    Uid,
    /// Group id of the current task.
    Gid,
    /// Name of the current task (16 bytes).
    Comm,
    /// Nanoseconds since boot, CLOCK_MONOTONIC (`bpf_ktime_get_ns`).
    Nsecs,
    /// Nanoseconds since weft started.
    Elapsed,
    /// The CPU the probe fires on.
    Cpu,
    /// Id of the current task's cgroup (v2).
    Cgroup,
    /// The full name of the probe that fired.
    Probe,
    /// The tracepoint's arguments: use `args->field`.
    Args,
    /// Address of the current `struct task_struct`.
    Curtask,
    /// Pid of the command started with `-c`.
    Cpid,
    /// A pseudo-random `u32`.
    Rand,
    /// The return value (kretprobe/uretprobe only).
    Retval,
    /// `argN`: an argument of the probed function or USDT site (see `builtins::uprobe`).
    Arg(u8),
    /// `func`: the probed function's name.
    Func,
    /// The kernel stack (`kstack(bpftrace, 127)`), see `builtins::stacks`.
    Kstack,
    /// The user stack with the pid to symbolize it (`ustack(bpftrace, 127)`).
    Ustack,
}

/// Every builtin name, for suggestions.
pub const BUILTIN_NAMES: &[&str] = &[
    "func", "arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "pid", "tid", "uid", "gid", "comm",
    "nsecs", "elapsed", "cpu", "cgroup", "probe", "args", "curtask", "cpid", "rand", "retval",
    "kstack", "ustack",
];

/// Builtins of bpftrace that weft recognises but does not compile yet.
const PLANNED: &[&str] = &[
    "func",
    "arg0",
    "arg1",
    "arg2",
    "arg3",
    "arg4",
    "arg5",
    "arg6",
    "arg7",
    "arg8",
    "arg9",
    "sarg0",
    "sarg1",
    "sarg2",
    "username",
    "jiffies",
    "numaid",
    "ctx",
    "__builtin_ncpus",
    "ncpus",
    "usermode",
];

pub fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "pid" => Builtin::Pid,
        "tid" => Builtin::Tid,
        "uid" => Builtin::Uid,
        "gid" => Builtin::Gid,
        "comm" => Builtin::Comm,
        "nsecs" => Builtin::Nsecs,
        "elapsed" => Builtin::Elapsed,
        "cpu" => Builtin::Cpu,
        "cgroup" => Builtin::Cgroup,
        "probe" => Builtin::Probe,
        "args" => Builtin::Args,
        "curtask" => Builtin::Curtask,
        "cpid" => Builtin::Cpid,
        "rand" => Builtin::Rand,
        "retval" => Builtin::Retval,
        "func" => Builtin::Func,
        other if super::uprobe::arg_index(other).is_some() => {
            Builtin::Arg(super::uprobe::arg_index(other).unwrap_or(0))
        }
        "kstack" => Builtin::Kstack,
        "ustack" => Builtin::Ustack,
        _ => return None,
    })
}

pub fn planned_builtin(name: &str) -> bool {
    PLANNED.contains(&name) || (name.starts_with("arg") && name[3..].parse::<u32>().is_ok())
}

impl Builtin {
    /// The type of the builtin in a probe with this context, or why it is not available.
    pub fn ty(self, context: &Context) -> Result<Type, &'static str> {
        Ok(match self {
            Builtin::Pid
            | Builtin::Tid
            | Builtin::Uid
            | Builtin::Gid
            | Builtin::Cpu
            | Builtin::Rand
            | Builtin::Cpid => Type::U32,
            Builtin::Comm => Type::Str { size: COMM_SIZE },
            Builtin::Nsecs | Builtin::Elapsed | Builtin::Cgroup => Type::U64,
            // bpftrace prints `probe` as text; it is a compile-time string per program.
            Builtin::Probe => Type::Str {
                size: crate::types::DEFAULT_STR_SIZE,
            },
            Builtin::Curtask => Type::Pointer {
                c_type: "struct task_struct *".into(),
            },
            Builtin::Kstack => super::stacks::default_stack(false),
            Builtin::Ustack => super::stacks::default_stack(true),
            Builtin::Args => match context {
                Context::Tracepoint(_) => Type::TracepointArgs,
                Context::Stream(index) => Type::StreamArgs(*index),
                Context::Fentry {
                    exit: true,
                    mode: crate::providers::FentryMode::Kprobe,
                    ..
                } => {
                    return Err(
                        "without BPF trampolines this fexit runs as a kretprobe, and the registers that held the arguments are reused by the time the function returns: read `args` in an fentry probe on the same function, save them in a map keyed by tid, and read them back here",
                    );
                }
                Context::Fentry {
                    mode: crate::providers::FentryMode::ForKprobe,
                    ..
                } => {
                    return Err(
                        "`args` exists in tracepoint, rawtracepoint, fentry and fexit probes; in kprobes use arg0..argN",
                    );
                }
                Context::Fentry { .. } | Context::RawTracepoint { args: Some(_) } => {
                    Type::TracepointArgs
                }
                Context::RawTracepoint { args: None } => {
                    return Err(
                        "without kernel BTF a raw tracepoint's arguments have no names: use arg0..argN",
                    );
                }
                Context::None
                | Context::Uprobe { .. }
                | Context::Usdt { .. }
                | Context::Kprobe { .. } => {
                    return Err(
                        "`args` exists in tracepoint, rawtracepoint, fentry and fexit probes; in kprobes use arg0..argN",
                    );
                }
            },
            Builtin::Retval => super::uprobe::retval_type(context)?,
            Builtin::Arg(n) => super::uprobe::arg_type(n, context)?,
            Builtin::Func => super::uprobe::func_type(context)?,
        })
    }
}
