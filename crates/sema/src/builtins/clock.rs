//! Clocks: `nsecs` (nanoseconds since boot, CLOCK_MONOTONIC, as
//! `bpf_ktime_get_ns` reads it) and `elapsed` (nanoseconds since weft
//! started). Both `uint64`.
//!
//! Example: `tracepoint:syscalls:sys_enter_read { @start[tid] = nsecs; }`
//!
//! Lowering: `codegen::lower::builtins::clock`.

use super::VariableDef;
use crate::providers::Context;
use crate::types::Type;
use crate::config::ScriptConfig;

pub const NSECS: VariableDef = VariableDef {
    name: "nsecs",
    numbered: false,
    help: "nanoseconds since boot (CLOCK_MONOTONIC)",
    ty,
};

pub const ELAPSED: VariableDef = VariableDef {
    name: "elapsed",
    numbered: false,
    help: "nanoseconds since weft started",
    ty,
};

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U64)
}
