//! `cpu`: the CPU the probe fires on (`bpf_get_smp_processor_id`), a `uint32`.
//!
//! Example: `profile:hz:99 { @[cpu] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::cpu`.

use super::VariableDef;
use crate::providers::Context;
use crate::types::Type;
use crate::config::ScriptConfig;

pub const DEF: VariableDef = VariableDef {
    name: "cpu",
    numbered: false,
    help: "the CPU the probe fires on",
    ty,
};

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U32)
}
