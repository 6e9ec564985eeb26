//! `len(@m)`: the number of elements of a map with keys, an `int64`, as
//! bpftrace's standard library has it; `len(ustack)`, `len(kstack)`: the
//! number of frames of a stack.
//!
//! What it does: asks the kernel for the map's element count through the
//! `bpf_map_sum_elem_count` kfunc (Linux 6.6 and later), found by its
//! vmlinux BTF id when checking; the count is kept by the kernel for every
//! hash map, so reading it costs no walk over the elements.
//!
//! Why it is limited: a map without keys has no elements to count (an
//! error in bpftrace's words); a kernel without the kfunc is told in one
//! sentence.
//!
//! A stack's frames: weft keeps a stack as its id in the stack map, which
//! a program cannot read back, so `len()` takes the same stack again with
//! `bpf_get_stack` (at most the stack's limit of frames) and counts what it
//! wrote. A stack made in this probe (`len(ustack(3))`, `$s = kstack;
//! len($s)`) is the stack of this very event, so the count is its own; a
//! stack read from a map was taken by another event, and is refused.
//!
//! Example: `tracepoint:sched:sched_process_exec { @seen[pid] = 1; @n = len(@seen); }`
//!
//! Lowering: `codegen::lower::builtins::len` (the kfunc called with the
//! map's pointer).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "len",
    signature: "len(@m | ustack | kstack)",
    help: "the number of elements of a map with keys, or of frames of a stack",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let m = match cx.args {
        [
            m @ Expr {
                kind: ExprKind::Map { keys, .. },
                ..
            },
        ] if keys.is_empty() => m,
        [other] => {
            let t = cx.check(other);
            if matches!(t, Type::Stack { .. }) {
                if matches!(other.kind, ExprKind::Map { .. }) {
                    cx.not_supported_yet(
                        other.span,
                        "`len()` of a stack kept in a map (weft keeps its id, which a program cannot read back)",
                    );
                }
            } else {
                cx.error(diag::type_mismatch(
                    other.span,
                    "len()",
                    "a map, ustack or kstack",
                    &t,
                ));
            }
            return Type::I64;
        }
        _ => {
            cx.check_non_map_args();
            cx.wrong_arg_count("one map, like `@m`");
            return Type::I64;
        }
    };
    cx.map_ref(m, None);
    if let Some(info) = cx.map_info(m)
        && info.key.is_none()
    {
        cx.error(diag::map_needs_keys(
            m.span,
            "len",
            &info.name,
            info.first_assigned,
        ));
        return Type::I64;
    }
    let counter = cx.kernel().and_then(|k| {
        let btf = k.btf().ok()?;
        btf.find(ktypes::btf::kind::FUNC, "bpf_map_sum_elem_count")
    });
    match counter {
        Some(id) => cx.set_value(CallValue::Constant(i64::from(id))),
        None => cx.error(diag::no_map_elem_count(cx.call.span)),
    }
    Type::I64
}

