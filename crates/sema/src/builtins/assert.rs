//! `assert(condition, message)`: when the condition is false, an error
//! naming the call (`stdin:1:9-42: ERROR: assert failed: message`, as
//! `errorf` prints) and the run ends with status 1, as bpftrace's standard
//! library macro does. bpftrace names the `errorf` line of its own
//! `stdlib/base.bt`, then the script's call; weft has no such file and
//! names the script's call only.
//!
//! Example: `tracepoint:syscalls:sys_exit_read { assert(args->ret >= -4095, "read returned a pointer"); }`
//!
//! Lowering: `codegen::lower::builtins::assert` (a branch, then the
//! error record and an exit record with code 1).

use abi::PrintfAction;

use super::{CallCheck, FunctionDef};
use crate::typed::{CallValue, PrintfSite};
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "assert",
    signature: "assert(condition, message)",
    help: "when the condition is false: an error naming the call, and the run ends with status 1",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let [condition, message] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("a condition and a message");
        return Type::Void;
    };
    let t = cx.check(condition);
    cx.expect_int(condition, &t, "assert()'s condition");
    let m = cx.check(message);
    if !m.is_str() {
        let d = crate::diagnostics::type_mismatch(message.span, "assert()'s message", "a string", &m);
        cx.error(d);
        return Type::Void;
    }
    let site = cx.add_printf(PrintfSite {
        format: abi::printf::Format::parse("assert failed: %s"),
        args: vec![m.stored()],
        action: PrintfAction::Error,
        span: cx.call.span,
    });
    cx.set_value(CallValue::Site(site));
    Type::Void
}
