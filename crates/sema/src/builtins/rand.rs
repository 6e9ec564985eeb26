//! `rand`: a pseudo-random `uint32` (`bpf_get_prandom_u32`), for sampling:
//! `tracepoint:syscalls:sys_enter_read /rand % 100 == 0/ { ... }`.
//!
//! Lowering: `codegen::lower::builtins::rand`.

use super::VariableDef;
use crate::providers::Context;
use crate::types::Type;
use crate::config::ScriptConfig;

pub const DEF: VariableDef = VariableDef {
    name: "rand",
    numbered: false,
    help: "a pseudo-random 32-bit number",
    ty,
};

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U32)
}
