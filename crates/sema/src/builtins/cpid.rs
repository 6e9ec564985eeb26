//! `cpid`: the pid of the command `-c` started (0 without `-c`), compiled
//! into the program: `tracepoint:syscalls:sys_enter_read /pid == cpid/ { ... }`.
//!
//! Lowering: `codegen::lower::builtins::cpid` (a constant).

use super::VariableDef;
use crate::providers::Context;
use crate::types::Type;
use crate::config::ScriptConfig;

pub const DEF: VariableDef = VariableDef {
    name: "cpid",
    numbered: false,
    help: "the pid of the command -c started",
    ty,
};

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U32)
}
