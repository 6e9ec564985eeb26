//! `usermode`: 1 when the probe fired while the task ran in user mode,
//! else 0, a `uint8`, as bpftrace has it (x86-64).
//!
//! What it does: uprobes and USDT probes always fire in user mode (1);
//! tracepoints, raw tracepoints and fentry/fexit always in the kernel (0);
//! kprobes and perf-event probes (profile, interval, software) look at the
//! privilege level of the interrupted code in the saved registers. BEGIN and
//! END run for weft itself, in user mode (1), as in bpftrace.
//! Why it is limited: a `stream:NAME` handler has no task of its own.
//!
//! Example: `profile:hz:99 { @[usermode ? "user" : "kernel"] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::usermode`.

use super::VariableDef;
use crate::config::ScriptConfig;
use crate::providers::Context;
use crate::types::Type;

pub const DEF: VariableDef = VariableDef {
    name: "usermode",
    numbered: false,
    help: "1 if the task was in user mode when the probe fired, else 0",
    ty,
};

fn ty(context: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    match context {
        Context::Stream(_) => Err("a stream handler runs for a completed record, not a task"),
        _ => Ok(Type::Int {
            size: 1,
            signed: false,
        }),
    }
}
