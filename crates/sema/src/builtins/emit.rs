//! `emit()`: in a `stream:NAME` handler, sends the completed instance's
//! record to the output (text, JSON, `--timeline`), as an instance without
//! handlers is sent.
//!
//! Why it is limited: only a handler has a record to send.
//!
//! Lowering: `codegen::lower::builtins::emit`.

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::providers::Context;
use crate::types::Type;

/// The name streams look for (a handler that emits needs the instance's identity).
pub const NAME: &str = "emit";

pub const DEF: FunctionDef = FunctionDef {
    name: NAME,
    signature: "emit()",
    help: "sends the stream instance's record (in a stream:NAME handler)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    if !matches!(cx.context(), Context::Stream(_)) {
        cx.error(diag::emit_outside_handler(cx.call.span));
    } else if let Some(a) = cx.args.first() {
        let d = diag::wrong_arg_count(a.span, NAME, "no arguments", cx.args.len());
        cx.error(d);
    }
    Type::Void
}
