//! `args`: the probe's named arguments, read as `args->NAME`: a
//! tracepoint's fields, a raw tracepoint's or an fentry/fexit function's
//! parameters typed by BTF, a stream instance's record in a `stream:NAME`
//! handler, a uprobe's parameters typed by the binary's DWARF (resolved by
//! the checker, `Checker::uprobe_args`, which needs the probe's binary;
//! there `args` is also a record value). `weft -lv PROBE` lists them.
//!
//! Why it is limited: kprobes have registers, not names (use
//! `arg0`..`argN`); an fexit that runs as a kretprobe (no BPF trampolines)
//! and a uretprobe no longer have the values at entry.
//!
//! Lowering: none of its own: `args->NAME` is a field read (`codegen::lower::expr`).

use super::VariableDef;
use crate::providers::{Context, FentryMode};
use crate::types::Type;
use crate::config::ScriptConfig;

pub const DEF: VariableDef = VariableDef {
    name: "args",
    numbered: false,
    help: "the probe's named arguments: args->NAME",
    ty,
};

const IN_KPROBES: &str = "`args` exists in tracepoint, rawtracepoint, fentry, fexit and uprobe probes; in kprobes use arg0..argN";

fn ty(context: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    match context {
        Context::Tracepoint(_) => Ok(Type::TracepointArgs),
        Context::Stream(index) => Ok(Type::StreamArgs(*index)),
        Context::Fentry {
            exit: true,
            mode: FentryMode::Kprobe,
            ..
        } => Err(
            "without BPF trampolines this fexit runs as a kretprobe, and the registers that held the arguments are reused by the time the function returns: read `args` in an fentry probe on the same function, save them in a map keyed by tid, and read them back here",
        ),
        Context::Fentry {
            mode: FentryMode::ForKprobe,
            ..
        } => Err(IN_KPROBES),
        Context::Fentry { .. } | Context::RawTracepoint { args: Some(_) } => {
            Ok(Type::TracepointArgs)
        }
        Context::Iter { .. } => Err("an iterator's fields are read through `ctx` (`ctx.task.comm`)"),
        Context::RawTracepoint { args: None } => Err(
            "without kernel BTF a raw tracepoint's arguments have no names: use arg0..argN",
        ),
        Context::None | Context::Uprobe { .. } | Context::Usdt { .. } | Context::Kprobe { .. } => {
            Err(IN_KPROBES)
        }
    }
}
