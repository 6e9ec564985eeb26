//! `cgroupid("PATH")`: the id of the cgroup whose directory is `PATH`.
//!
//! What it does: looks the directory up when the script is compiled
//! (through the `KernelInfo` seam: `name_to_handle_at`, as bpftrace) and
//! gives its id as a `uint64`, the value `cgroup` has for a task in that
//! cgroup: `/cgroup == cgroupid("/sys/fs/cgroup/unified/app")/`.
//!
//! Why it is limited: the path must be a string literal naming an existing
//! directory; only a cgroup v2 directory's id is one `cgroup` can equal.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat /cgroup == cgroupid("/sys/fs/cgroup/system.slice")/ { @[comm] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::cgroupid` (a constant).

use ktypes::KernelInfoError;
use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "cgroupid",
    signature: "cgroupid(\"PATH\")",
    help: "the id of the cgroup whose directory is PATH (what `cgroup` gives in it)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let (path, span) = match cx.args {
        [
            Expr {
                kind: ExprKind::Str(bytes),
                span,
                ..
            },
        ] => (String::from_utf8_lossy(bytes).into_owned(), *span),
        [other] => {
            let span = other.span;
            cx.needs_literal(span, "cgroupid()'s path");
            return Type::U64;
        }
        _ => {
            cx.wrong_arg_count("one cgroup directory");
            return Type::U64;
        }
    };
    let Some(kernel) = cx.kernel() else {
        return Type::U64;
    };
    match kernel.cgroup_id(&path) {
        Ok(id) => cx.set_value(CallValue::Constant(id as i64)),
        Err(e) => {
            let why = match e {
                KernelInfoError::NotFound(_) => format!("{path} does not exist"),
                other => other.to_string(),
            };
            cx.error(diag::cgroup_not_found(span, &path, &why));
        }
    }
    Type::U64
}
