//! `printf(fmt, args...)`, `cat(fmt, args...)` and `system(fmt, args...)`.
//!
//! What they do: `printf` prints its arguments in `fmt`, as bpftrace's
//! printf does (C's conversions plus `%r`/`%rx`/`%rh` for buffers, with
//! bpftrace 0.17's quirks); `cat` formats the same way and prints the
//! contents of the file the text names (`cat("/proc/%d/status", pid)`);
//! `system` runs the text as a shell command (`sh -c`) in user space and
//! prints its stdout, as bpftrace does, and only with `--unsafe`: it
//! changes the system, and the run waits for it.
//! The format is parsed once, here (`abi::printf`), and carried to user
//! space in the manifest, so what is checked here is what prints.
//!
//! `errorf` and `warnf` format the same way and print the text as an error
//! or a warning naming where the call is (`stdin:1:9-62: ERROR: text`,
//! then each macro use it was expanded from), on stderr, as bpftrace's
//! current release does; the run goes on. `--no-warnings` hides `warnf`.
//!
//! Why it is limited: the format must be a string literal (or a macro
//! that gives one); each conversion
//! takes one argument of its kind (`%s` a string, a stack, a symbol, an
//! address from `ntop()` or a time from `strftime()`; `%r` a `buf()`;
//! integer conversions an integer or pointer).
//!
//! Lowering: `codegen::lower::builtins::printf` (one ring-buffer record
//! with the arguments at the offsets of the printf's layout).

use abi::PrintfAction;
use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::{CallValue, PrintfSite};
use crate::types::Type;

pub const PRINTF: FunctionDef = FunctionDef {
    name: "printf",
    signature: "printf(fmt, args...)",
    help: "prints the arguments in the format, as C's printf",
    check: check_printf,
    aggregates: false,
};

pub const CAT: FunctionDef = FunctionDef {
    name: "cat",
    signature: "cat(fmt, args...)",
    help: "prints the contents of the file the formatted text names",
    check: check_cat,
    aggregates: false,
};

pub const SYSTEM: FunctionDef = FunctionDef {
    name: "system",
    signature: "system(fmt, args...)",
    help: "runs the formatted text as a shell command and prints its output (--unsafe)",
    check: check_system,
    aggregates: false,
};

pub const ERRORF: FunctionDef = FunctionDef {
    name: "errorf",
    signature: "errorf(fmt, args...)",
    help: "prints the formatted text as an error naming the call's line; the run goes on",
    check: check_errorf,
    aggregates: false,
};

pub const WARNF: FunctionDef = FunctionDef {
    name: "warnf",
    signature: "warnf(fmt, args...)",
    help: "prints the formatted text as a warning naming the call's line (not with --no-warnings)",
    check: check_warnf,
    aggregates: false,
};

fn check_errorf(cx: &mut CallCheck<'_, '_>) -> Type {
    check(cx, PrintfAction::Error)
}

fn check_warnf(cx: &mut CallCheck<'_, '_>) -> Type {
    check(cx, PrintfAction::Warning)
}

fn check_printf(cx: &mut CallCheck<'_, '_>) -> Type {
    check(cx, PrintfAction::Print)
}

fn check_cat(cx: &mut CallCheck<'_, '_>) -> Type {
    check(cx, PrintfAction::Cat)
}

fn check_system(cx: &mut CallCheck<'_, '_>) -> Type {
    cx.require_unsafe("runs a command");
    check(cx, PrintfAction::System)
}

fn check(cx: &mut CallCheck<'_, '_>, action: PrintfAction) -> Type {
    let name = cx.name;
    let Some((first, rest)) = cx.args.split_first() else {
        cx.wrong_arg_count("a format string and its arguments");
        return Type::Void;
    };
    let Some(bytes) = literal_string(first) else {
        cx.needs_literal(first.span, &format!("{name}()'s format"));
        return Type::Void;
    };
    let arg_types: Vec<Type> = rest.iter().map(|a| cx.check(a)).collect();
    // Parsed once: the manifest carries this parse to the output, so what
    // passes here prints as checked.
    let parsed = abi::printf::Format::parse(&String::from_utf8_lossy(bytes));
    let kinds = match parsed.validate() {
        Ok(k) => k,
        Err(err) => {
            cx.error(diag::printf_format(first.span, &err.message));
            return Type::Void;
        }
    };
    if kinds.len() != rest.len() {
        cx.error(diag::printf_args(cx.call.span, kinds.len(), rest.len()));
        return Type::Void;
    }
    for ((conv, arg), t) in parsed.conversions().iter().zip(rest).zip(&arg_types) {
        use abi::printf::ArgKind;
        let ok = match conv.kind {
            ArgKind::Integer => t.is_scalar(),
            ArgKind::String => {
                t.is_str()
                    || matches!(
                        t,
                        Type::Inet
                            | Type::Named(_)
                            | Type::MacAddr
                            | Type::Enum { .. }
                            | Type::Stack { .. }
                            | Type::Sym { .. }
                            | Type::Timestamp { .. }
                            | Type::CgroupPath
                    )
            }
            ArgKind::Buffer => matches!(t, Type::Buf { .. }),
        };
        if !ok {
            let expected = match conv.kind {
                ArgKind::String => "a string",
                ArgKind::Integer => "an integer",
                ArgKind::Buffer => "a buffer (buf() is not supported yet)",
            };
            cx.error(diag::type_mismatch(
                arg.span,
                &format!("`%{}`", conv.specifier),
                expected,
                t,
            ));
        }
    }
    let site = cx.add_printf(PrintfSite {
        format: parsed,
        args: arg_types.iter().map(Type::stored).collect(),
        action,
        span: cx.call.span,
    });
    cx.set_value(CallValue::Site(site));
    Type::Void
}

/// A string literal, or a block that only gives one (a macro's expansion:
/// `macro fmt() { "hi\n" }` then `printf(fmt())`).
pub fn literal_string(e: &syntax::ast::Expr) -> Option<&[u8]> {
    match &e.kind {
        ExprKind::Str(bytes) => Some(bytes),
        ExprKind::Block(b) if b.stmts.is_empty() => literal_string(b.tail.as_deref()?),
        _ => None,
    }
}
