//! `ctx`: the program's context as a typed pointer. In an `iter:TARGET`
//! probe it points to the kernel's `struct bpf_iter__TARGET`, so
//! `ctx.task.comm` reads the task visited; in kprobes, uprobes and usdt
//! probes to the registers (`struct pt_regs *`); elsewhere it is a
//! `void *` for the script to cast (as in bpftrace, whose `ctx` is the
//! context in every probe). `args`, `argN` and `reg()` are the usual way in.
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
    help: "the program's context: in iter probes, the object visited (ctx.task); the registers in kprobes and uprobes",
    ty,
};

fn ty(context: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    let c_type = match context {
        Context::Iter { target } => format!("struct {} *", iter::context_struct(target)),
        Context::Kprobe { .. } | Context::Uprobe { .. } | Context::Usdt { .. } => {
            "struct pt_regs *".to_string()
        }
        _ => "void *".to_string(),
    };
    Ok(Type::Pointer { c_type })
}
