//! `is_err(ptr)`: whether a pointer the kernel returned encodes an error
//! (`ERR_PTR`: the last 4095 values of the address space, -4095 to -1 as
//! a signed number), the kernel's `IS_ERR()`, as bpftrace's standard
//! library has it. A `bool`.
//!
//! Example: `fexit:do_filp_open { if (is_err(retval)) { printf("error: %ld\n", (int64)retval); } }`
//!
//! Lowering: `codegen::lower::builtins::is_err` (one unsigned comparison).

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "is_err",
    signature: "is_err(ptr)",
    help: "whether a kernel pointer encodes an error code (IS_ERR)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let [arg] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("one pointer or integer");
        return Type::Bool;
    };
    let t = cx.check(arg);
    cx.expect_int(arg, &t, "is_err()");
    Type::Bool
}
