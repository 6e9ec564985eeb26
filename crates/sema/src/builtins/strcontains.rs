//! `strcontains(haystack, needle)`: whether the string `needle` occurs in
//! the string `haystack`.
//!
//! What it does: both are strings (literals, variables, `str()`, `comm`);
//! each ends at its first NUL, as C strings do, so what follows a NUL is
//! never matched and an empty needle is in every haystack. Case matters.
//! The result is a boolean (`print()` shows `true`/`false`), usable in
//! conditions and as a value, as in bpftrace.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat /strcontains(str(args.filename), "ssh")/ { @[comm] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::strcontains` (a bounded loop over
//! the haystack's positions and the needle's bytes, so the program grows
//! with neither length).

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "strcontains",
    signature: "strcontains(haystack, needle)",
    help: "whether the string needle occurs in the string haystack",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let args = cx.args;
    if args.len() != 2 {
        cx.check_all();
        cx.wrong_arg_count("two strings");
        return Type::Bool;
    }
    for (arg, what) in args.iter().zip(["haystack", "needle"]) {
        let t = cx.check(arg);
        if !matches!(t, Type::Str { .. }) {
            let place = format!("strcontains()'s {what}");
            cx.error(diag::type_mismatch(arg.span, &place, "a string", &t));
        }
    }
    Type::Bool
}
