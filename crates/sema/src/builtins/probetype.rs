//! `probetype` (also `probetype()`, `__builtin_probetype`): the type of
//! the probe that fired, as bpftrace's current release names it:
//! `tracepoint`, `uprobe`, `interval`, ...; `special` for `begin`, `end`
//! and `self`, `benchmark` for `bench`. A string compiled into each program.
//!
//! Example: `tracepoint:syscalls:sys_enter_read, uprobe:/bin/bash:readline { @[probetype] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::probetype` (a literal).

use super::VariableDef;
use crate::config::ScriptConfig;
use crate::providers::Context;
use crate::types::Type;

pub const DEF: VariableDef = VariableDef {
    name: "probetype",
    numbered: false,
    help: "the type of the probe that fired (tracepoint, uprobe, special for begin/end)",
    ty,
};

/// The type bpftrace names for a probe of provider `provider` (weft's
/// canonical provider name).
pub fn probe_type_name(provider: &str) -> &str {
    match provider {
        "BEGIN" | "END" | "self" => "special",
        "bench" => "benchmark",
        other => other,
    }
}

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    // The longest name (`rawtracepoint`) and its NUL.
    Ok(Type::Str { size: 16 })
}
