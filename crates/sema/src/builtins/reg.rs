//! `reg("NAME")`: a register of the probed task.
//!
//! What it does: reads register `NAME` (`ip`, `sp`, `ax`, `di`, ..., as
//! bpftrace names x86_64's) from the `struct pt_regs` the probe receives,
//! at the offset `abi::arch` gives. A `uint64`.
//!
//! Why it is limited: only probes that receive the registers have them
//! (kprobe, uprobe, usdt); the name must be a string literal.
//!
//! Example: `uprobe:/bin/bash:readline { printf("%lx\n", reg("ip")); }`
//!
//! Lowering: `codegen::lower::builtins::reg` (one load from the context).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::providers::Context;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "reg",
    signature: "reg(\"NAME\")",
    help: "a register of the probed task (kprobe, uprobe, usdt)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    cx.check_all();
    let name = match cx.args {
        [
            Expr {
                kind: ExprKind::Str(b),
                ..
            },
        ] => String::from_utf8_lossy(b).into_owned(),
        _ => {
            cx.needs_literal(cx.call.span, "reg()'s register name");
            return Type::U64;
        }
    };
    if !matches!(
        cx.context(),
        Context::Uprobe { .. } | Context::Usdt { .. } | Context::Kprobe { .. }
    ) {
        cx.error(diag::reg_needs_registers(cx.call.span));
        return Type::U64;
    }
    let Some(offset) = abi::arch::reg_offset(&name) else {
        let d = diag::unknown_register(cx.args[0].span, &name, abi::arch::reg_names());
        cx.error(d);
        return Type::U64;
    };
    cx.set_value(CallValue::Constant(i64::from(offset)));
    Type::U64
}
