//! Stacks and symbols.
//!
//! - `kstack` / `ustack` (variables) and `kstack([mode][, limit])` /
//!   `ustack([mode][, limit])` (functions): the kernel or user stack of the
//!   current task, at most `limit` frames (default 127, at most 1024),
//!   printed in `mode` (`bpftrace`, the default: `symbol+offset` per line;
//!   `perf`: `address symbol+offset (module)` per line; `raw`: the address
//!   in hex per line; `build_id`, user stacks only: the build id of the
//!   file each frame is in and the frame's offset in it, what a symbolizer
//!   on another machine needs). Usable as map keys and values, in printf's
//!   `%s`, and in tuples.
//!   *Why:* `@[kstack] = count()` under `profile:hz:99` is a CPU profile;
//!   under `tracepoint:sched:sched_switch` an off-CPU profile.
//!   A stack that could not be captured (a user-mode sample's kernel stack,
//!   a kernel thread's user stack) is empty, as in bpftrace.
//! - `ksym(addr)` / `usym(addr)`: the name of the kernel (or current process's)
//!   symbol holding `addr`; an unknown address prints in hex.
//!
//! Lowering: `codegen::lower::builtins::stacks`; symbolization in user space.
//! The variables `kstack`/`ustack` are `kstack()`/`ustack()` with no arguments.

use abi::StackMode;
use abi::stack::{DEFAULT_STACK_LIMIT, MAX_STACK_LIMIT};
use source::Diagnostic;
use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef, VariableDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const KSTACK_VAR: VariableDef = VariableDef {
    name: "kstack",
    numbered: false,
    help: "the kernel stack (kstack(bpftrace, 127))",
    ty: |_, _, config| Ok(default_stack(false, config.stack_mode())),
};

pub const USTACK_VAR: VariableDef = VariableDef {
    name: "ustack",
    numbered: false,
    help: "the user stack (ustack(bpftrace, 127))",
    ty: |_, _, config| Ok(default_stack(true, config.stack_mode())),
};

pub const KSTACK: FunctionDef = FunctionDef {
    name: "kstack",
    signature: "kstack([mode][, limit])",
    help: "the kernel stack, at most limit frames, printed in mode (bpftrace, perf or raw)",
    check: check_kstack,
    aggregates: false,
};

pub const USTACK: FunctionDef = FunctionDef {
    name: "ustack",
    signature: "ustack([mode][, limit])",
    help: "the user stack, at most limit frames, printed in mode (bpftrace, perf, raw or build_id)",
    check: check_ustack,
    aggregates: false,
};

pub const KSYM: FunctionDef = FunctionDef {
    name: "ksym",
    signature: "ksym(addr)",
    help: "the name of the kernel symbol holding addr",
    check: check_ksym,
    aggregates: false,
};

pub const USYM: FunctionDef = FunctionDef {
    name: "usym",
    signature: "usym(addr)",
    help: "the name of the current process's symbol holding addr",
    check: check_usym,
    aggregates: false,
};

fn check_kstack(cx: &mut CallCheck<'_, '_>) -> Type {
    check_stack(cx, false)
}

fn check_ustack(cx: &mut CallCheck<'_, '_>) -> Type {
    check_stack(cx, true)
}

fn check_stack(cx: &mut CallCheck<'_, '_>, user: bool) -> Type {
    let default_mode = stack_mode_for(user, cx.config().stack_mode());
    match stack_call(user, cx.name, cx.args, default_mode) {
        Ok(t) => t,
        Err(d) => {
            cx.error(d);
            Type::I64
        }
    }
}

fn check_ksym(cx: &mut CallCheck<'_, '_>) -> Type {
    check_sym(cx, false)
}

fn check_usym(cx: &mut CallCheck<'_, '_>) -> Type {
    check_sym(cx, true)
}

fn check_sym(cx: &mut CallCheck<'_, '_>, user: bool) -> Type {
    match cx.args {
        [a] => {
            let t = cx.check(a);
            let what = format!("{}()", cx.name);
            cx.expect_int(a, &t, &what);
        }
        _ => {
            cx.check_all();
            cx.wrong_arg_count("one address");
        }
    }
    Type::Sym { user }
}

/// `kstack` / `ustack` written without arguments, in the `stack_mode` of
/// the config (`build_id` is for user stacks: kernel ones fall back to `raw`,
/// as in bpftrace).
pub fn default_stack(user: bool, mode: StackMode) -> Type {
    Type::Stack {
        user,
        mode: stack_mode_for(user, mode),
        limit: DEFAULT_STACK_LIMIT,
    }
}

fn stack_mode_for(user: bool, mode: StackMode) -> StackMode {
    match mode {
        StackMode::BuildId if !user => StackMode::Raw,
        m => m,
    }
}

/// The type of `kstack(args)` / `ustack(args)`: the arguments are a mode
/// name, a literal frame limit, or both in that order; without a mode,
/// `default_mode` (the config's `stack_mode`).
pub fn stack_call(
    user: bool,
    name: &str,
    args: &[Expr],
    default_mode: StackMode,
) -> Result<Type, Diagnostic> {
    let mode_of = |e: &Expr| match &e.kind {
        ExprKind::Ident(n) if n == "build_id" && !user => Err(diag::bad_stack_argument(
            e.span,
            name,
            "the `build_id` mode is for user stacks (ustack) only",
        )),
        ExprKind::Ident(n) => StackMode::from_name(n).ok_or_else(|| {
            diag::bad_stack_argument(e.span, name, &format!("unknown stack mode `{n}`"))
        }),
        _ => Err(diag::bad_stack_argument(
            e.span,
            name,
            "the mode must be `bpftrace`, `perf`, `raw` or `build_id`",
        )),
    };
    let limit_of = |e: &Expr| match e.kind {
        ExprKind::Int { value, .. } if (1..=u64::from(MAX_STACK_LIMIT)).contains(&value) => {
            Ok(value as u32)
        }
        ExprKind::Int { .. } => Err(diag::bad_stack_argument(
            e.span,
            name,
            &format!("the frame limit must be from 1 to {MAX_STACK_LIMIT}"),
        )),
        _ => Err(diag::bad_stack_argument(
            e.span,
            name,
            "the frame limit must be an integer literal",
        )),
    };
    let (mode, limit) = match args {
        [] => (default_mode, DEFAULT_STACK_LIMIT),
        [a] if matches!(a.kind, ExprKind::Int { .. }) => (default_mode, limit_of(a)?),
        [a] => (mode_of(a)?, DEFAULT_STACK_LIMIT),
        [m, l] => (mode_of(m)?, limit_of(l)?),
        [_, _, extra, ..] => {
            return Err(diag::bad_stack_argument(
                extra.span,
                name,
                "at most two arguments",
            ));
        }
    };
    Ok(Type::Stack { user, mode, limit })
}

#[cfg(test)]
mod tests {
    use super::*;
    use source::Span;
    use syntax::ast::NodeId;

    fn e(kind: ExprKind) -> Expr {
        Expr {
            id: NodeId(0),
            span: Span::DUMMY,
            kind,
        }
    }

    fn int(v: u64) -> Expr {
        e(ExprKind::Int {
            value: v,
            form: syntax::ast::IntForm::Plain,
        })
    }

    fn ident(n: &str) -> Expr {
        e(ExprKind::Ident(n.into()))
    }

    #[test]
    fn modes_and_limits() {
        let k = |args: &[Expr]| stack_call(false, "kstack", args, StackMode::Bpftrace);
        assert_eq!(k(&[]).unwrap(), default_stack(false, StackMode::Bpftrace));
        assert_eq!(
            k(&[ident("perf")]).unwrap(),
            Type::Stack {
                user: false,
                mode: StackMode::Perf,
                limit: 127
            }
        );
        assert_eq!(
            k(&[int(3)]).unwrap(),
            Type::Stack {
                user: false,
                mode: StackMode::Bpftrace,
                limit: 3
            }
        );
        assert_eq!(
            stack_call(true, "ustack", &[ident("bpftrace"), int(5)], StackMode::Raw).unwrap(),
            Type::Stack {
                user: true,
                mode: StackMode::Bpftrace,
                limit: 5
            }
        );
        assert!(k(&[int(0)]).is_err());
        assert!(k(&[int(2000)]).is_err());
        assert!(
            k(&[ident("sideways")])
                .unwrap_err()
                .message
                .contains("unknown stack mode `sideways`")
        );
        assert!(k(&[ident("build_id")]).is_err());
        // The config's mode where the call names none; build_id is for user stacks.
        assert_eq!(
            stack_call(true, "ustack", &[int(2)], StackMode::BuildId).unwrap(),
            Type::Stack {
                user: true,
                mode: StackMode::BuildId,
                limit: 2
            }
        );
        assert_eq!(
            default_stack(false, StackMode::BuildId),
            default_stack(false, StackMode::Raw)
        );
        assert!(k(&[ident("perf"), int(1), int(2)]).is_err());
    }
}
