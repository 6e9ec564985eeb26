//! `ctx`: the program's context as a typed pointer. In an `iter:TARGET`
//! probe it points to the kernel's `struct bpf_iter__TARGET`, so
//! `ctx.task.comm` reads the task visited. Other probes' contexts are
//! reached through `args`, `argN` and `reg()`.
//!
//! Example: `iter:task { printf("%s:%d\n", ctx.task.comm, ctx.task.pid); }`
//!
//! Lowering: `codegen::lower::builtins::ctx`.

use super::VariableDef;
use crate::config::ScriptConfig;
use crate::providers::{Context, iter};
use crate::types::Type;

pub const DEF: VariableDef = VariableDef {
    name: "ctx",
    numbered: false,
    help: "the program's context: in iter probes, the object visited (ctx.task)",
    ty,
};

fn ty(context: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    match context {
        Context::Iter { target } => Ok(Type::Pointer {
            c_type: format!("struct {} *", iter::context_struct(target)),
        }),
        _ => Err(
            "weft has `ctx` in iter probes; elsewhere read the context through args, argN or reg()",
        ),
    }
}
