//! `probe`: the full name of the probe that fired
//! (`tracepoint:syscalls:sys_enter_read`, one per concrete probe of a
//! wildcard), a string compiled into each program.
//!
//! Example: `tracepoint:syscalls:sys_enter_* { @[probe] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::probe` (a literal).

use super::VariableDef;
use crate::providers::Context;
use crate::types::{DEFAULT_STR_SIZE, Type};
use crate::config::ScriptConfig;

pub const DEF: VariableDef = VariableDef {
    name: "probe",
    numbered: false,
    help: "the full name of the probe that fired",
    ty,
};

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::Str {
        size: DEFAULT_STR_SIZE,
    })
}
