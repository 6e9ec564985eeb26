//! `exit()`: stops the run: the probe returns at once, user space prints
//! the maps (as at Ctrl-C), detaches and exits.
//!
//! Why it is limited: bpftrace's exit code argument is not supported yet.
//!
//! Lowering: `codegen::lower::builtins::exit` (a record, then return).

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "exit",
    signature: "exit()",
    help: "stops the run: prints the maps and detaches",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    if let Some(a) = cx.args.first() {
        cx.not_supported_yet(a.span, "an exit code argument");
    }
    Type::Void
}
