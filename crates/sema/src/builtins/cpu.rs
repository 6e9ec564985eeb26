//! `cpu`: the CPU the probe fires on (`bpf_get_smp_processor_id`), a
//! `uint32`; `ncpus` (also `__builtin_ncpus`): how many CPUs the kernel
//! can have (its possible CPUs, as bpftrace counts them), a `uint64` user
//! space writes at load, so `for ($c : 0..ncpus)` covers every CPU.
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

pub const NCPUS: VariableDef = VariableDef {
    name: "ncpus",
    numbered: false,
    help: "how many CPUs the kernel can have (possible CPUs)",
    ty: ncpus,
};

/// bpftrace's internal spelling, which its standard library uses.
pub const BUILTIN_NCPUS: VariableDef = VariableDef {
    name: "__builtin_ncpus",
    ..NCPUS
};

fn ncpus(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U64)
}

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U32)
}
