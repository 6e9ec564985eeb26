//! `numaid`: the NUMA node of the CPU the probe fires on
//! (`bpf_get_numa_node_id`), a `uint32`, as bpftrace has it.
//!
//! Example: `tracepoint:sched:sched_migrate_task { @[numaid] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::numaid`.

use super::VariableDef;
use crate::providers::Context;
use crate::types::Type;
use crate::config::ScriptConfig;

pub const DEF: VariableDef = VariableDef {
    name: "numaid",
    numbered: false,
    help: "the NUMA node of the CPU the probe fires on",
    ty,
};

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U32)
}
