//! `buf(ptr[, len])`: `len` raw bytes at `ptr`, printed by printf's `%r`
//! (printable bytes as they are, others as `\xNN`), `%rx` (all as `\xNN`)
//! or `%rh` (hex pairs).
//!
//! What it does: keeps at most `max_strlen` bytes (1024 by default); a length
//! known only at run time keeps what it says, up to that; a string gives no
//! more than its own bytes; an array (`buf($s.ints)`) gives all of its
//! bytes, as they are in memory.
//!
//! Example: `tracepoint:syscalls:sys_enter_write { printf("%r\n", buf(args->buf, args->count)); }`
//!
//! Lowering: `codegen::lower::builtins::buf` (`len: u32`, then the bytes).

use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "buf",
    signature: "buf(ptr[, len])",
    help: "len raw bytes at ptr, for printf's %r, %rx and %rh",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let args = cx.args;
    // `max_strlen` (1024 unless the config says).
    let max = cx.config().max_strlen();
    let (ptr, len) = match args {
        [p] => (p, None),
        [p, l] => (p, Some(l)),
        _ => {
            cx.check_all();
            cx.wrong_arg_count("an address and a length");
            return Type::Buf {
                size: max,
            };
        }
    };
    let t = cx.check(ptr);
    let array = matches!(t, Type::Array { .. });
    if !t.is_scalar() && !t.is_str() && !array {
        cx.error(diag::type_mismatch(
            ptr.span,
            "buf()",
            "an address, a string or an array",
            &t,
        ));
    }
    let size = match len {
        Some(l) => {
            let lt = cx.check(l);
            cx.expect_int(l, &lt, "buf()'s length");
            match l.kind {
                ExprKind::Int { value, .. } => (value as u32).clamp(1, max),
                _ => max,
            }
        }
        None => max,
    };
    // A string has no more bytes than its own; an array gives all of its
    // bytes unless a length says fewer.
    let size = match t {
        Type::Str { size: own } => size.min(own),
        Type::Array { .. } => {
            let own = t.layout().size().max(1);
            if len.is_some() { size.min(own) } else { own }
        }
        _ => size,
    };
    Type::Buf { size }
}
