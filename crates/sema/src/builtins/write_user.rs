//! `write_user(dst, src, len)`: writes `len` bytes of `src` over the
//! traced process's memory at `dst` (`bpf_probe_write_user`); true when the
//! kernel wrote them, as in bpftrace's current release.
//!
//! Why it is limited: it changes the traced process, so it needs `--unsafe`
//! (bpftrace's sentence, `write_user() is unsafe. ...`); `src` is a value
//! the program holds (a string, an integer at its width, an array held by
//! value), since the helper reads only the program's own memory; at most
//! `src`'s size is written (a longer `len` is cut to it), and a `len` of 0
//! writes nothing and gives false. The kernel writes only to the current
//! task's user memory and logs a warning in dmesg the first time.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat /comm == "app"/ { write_user(args.filename, "/tmp/x", 7); }`
//!
//! Lowering: `codegen::lower::builtins::write_user` (one helper call).

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "write_user",
    signature: "write_user(dst, src, len)",
    help: "writes len bytes of src over the traced process's memory at dst (--unsafe); true when written",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    cx.require_unsafe("writes to the traced process's memory");
    let [dst, src, len] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("a user address, a value and a length");
        return Type::Bool;
    };
    let t = cx.check(dst);
    cx.expect_int(dst, &t, "write_user()'s destination");
    let t = cx.check(src);
    if !is_held_value(&t) {
        let d = diag::type_mismatch(
            src.span,
            "write_user()'s source",
            "a value the program holds (a string, an integer or an array)",
            &t,
        );
        cx.error(d);
    }
    let t = cx.check(len);
    cx.expect_int(len, &t, "write_user()'s length");
    Type::Bool
}

/// Whether `write_user` can take `t` as its source: bytes the program holds.
pub fn is_held_value(t: &Type) -> bool {
    matches!(
        t,
        Type::Str { .. } | Type::Int { .. } | Type::Bool | Type::Enum { .. } | Type::Array { .. }
    )
}
