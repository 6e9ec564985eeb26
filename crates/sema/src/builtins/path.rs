//! `path(p[, size])`: the full path of a `struct path` (`ctx.file->f_path`,
//! `args.file->f_path`), as a string of `size` bytes (`max_strlen` unless
//! given).
//!
//! What it does: the kernel's `bpf_d_path` writes the path, as `d_path`
//! gives it (`/tmp/x`, `pipe:[1234]`, ` (deleted)` after a removed file).
//!
//! Why it is limited: the kernel allows `bpf_d_path` only in fentry/fexit
//! programs on the functions of its allowlist (`btf_allowlist_d_path`:
//! `security_file_open`, `vfs_truncate`, ...) and in iterators; elsewhere
//! it is refused here (E0477), and on a function outside the allowlist by
//! the verifier. Its argument must be a pointer the verifier trusts, so it
//! is read straight from the context down the written chain of members
//! (each pointer checked against NULL: a NULL one gives an empty string).
//!
//! Example: `iter:task_file { printf("%d %s\n", ctx.fd, path(ctx.file->f_path)); }`
//!
//! Lowering: `codegen::lower::builtins::path`.

use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "path",
    signature: "path(struct path *p[, size])",
    help: "the full path of a struct path (bpf_d_path; fentry, fexit and iter probes)",
    check,
    aggregates: false,
};

/// The pointer on the way to `e` that is read from kernel memory rather
/// than from the context (`ctx.vma->vm_file` in
/// `ctx.vma->vm_file->f_path`): the verifier does not trust such a
/// pointer, and `bpf_d_path` takes only trusted ones. Pointers the checker
/// cannot follow (variables, casts) are left to the verifier.
fn pointer_from_memory(cx: &CallCheck<'_, '_>, e: &syntax::ast::Expr) -> Option<source::Span> {
    let ExprKind::Field { expr: base, .. } = &e.kind else {
        return None;
    };
    let access = cx.member(e)?;
    if !access.arrow {
        return pointer_from_memory(cx, base);
    }
    // `base` is the pointer: trusted when read straight from the context.
    match &base.kind {
        ExprKind::Field { expr: holder, .. } if cx.member(base).is_some() => {
            let from_ctx = matches!(&holder.kind, ExprKind::Ident(name) if name == "ctx");
            (!from_ctx).then_some(base.span)
        }
        _ => None,
    }
}

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let max = cx.config().max_strlen();
    let runs_here = matches!(
        cx.probe().attach,
        abi::Attach::Fentry { .. } | abi::Attach::Iter { .. }
    );
    if !runs_here {
        let provider = cx.probe().provider;
        let d = diag::not_in_this_probe(
            cx.call.span,
            "path",
            provider,
            "fentry and fexit probes of the functions the kernel allows bpf_d_path in, and iter probes",
        );
        cx.error(d);
    }
    let (p, size) = match cx.args {
        [p] => (p, max),
        [p, size] => {
            let t = cx.check(size);
            let size = match size.kind {
                ExprKind::Int { value, .. } if value > 0 => (value as u32).min(max),
                _ => {
                    if cx.expect_int(size, &t, "path()'s size") {
                        cx.needs_literal(size.span, "path()'s size (a positive integer)");
                    }
                    max
                }
            };
            (p, size)
        }
        _ => {
            cx.check_all();
            cx.wrong_arg_count("a struct path and an optional size");
            return Type::Str { size: max };
        }
    };
    let t = cx.check(p);
    let is_path = match &t {
        Type::Struct { c_type, .. } => c_type == "struct path",
        Type::Pointer { c_type } => c_type.replace(' ', "") == "structpath*",
        _ => false,
    };
    if !is_path {
        cx.error(diag::type_mismatch(p.span, "path()", "a struct path", &t));
    } else if let Some(untrusted) = pointer_from_memory(cx, p) {
        cx.error(diag::path_needs_trusted_pointer(untrusted));
    }
    cx.set_value(CallValue::Constant(i64::from(matches!(t, Type::Pointer { .. }))));
    Type::Str { size }
}
