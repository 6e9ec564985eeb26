//! `exit()` and `exit(code)`: stops the run: the probe returns at once,
//! user space prints the maps (as at Ctrl-C), detaches and exits, with
//! status `code` (its low byte, as a process's status is; 0 without one),
//! as bpftrace's current release does. The first `exit` seen sets it.
//!
//! Example: `tracepoint:syscalls:sys_exit_openat /args->ret < 0/ { exit(1); }`
//!
//! Lowering: `codegen::lower::builtins::exit` (a record with the code,
//! then return).

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "exit",
    signature: "exit([code])",
    help: "stops the run: prints the maps, detaches and exits with status code (0)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    match cx.args {
        [] => {}
        [code] => {
            let t = cx.check(code);
            cx.expect_int(code, &t, "exit()'s code");
        }
        _ => {
            cx.check_all();
            cx.wrong_arg_count("no argument or an exit code");
        }
    }
    Type::Void
}
