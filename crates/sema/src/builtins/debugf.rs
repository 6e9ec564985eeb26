//! `debugf(fmt, args...)`: a line in the kernel's trace buffer.
//!
//! What it does: formats its arguments in the kernel with
//! `bpf_trace_printk` (`bpf_trace_vprintk` past three arguments, Linux
//! 5.16 and later), which writes the line to the trace buffer
//! (`/sys/kernel/tracing/trace` and `trace_pipe`, where each line reads
//! `bpf_trace_printk: TEXT`), not to weft's output. Every use is warned
//! about in bpftrace's words: the trace buffer is shared by the whole
//! system and the helper makes the kernel log a notice.
//!
//! Why it is limited: the format must be a string literal, and the kernel
//! formats it, so only its conversions are taken: `%d %i %u %x` (with `l`
//! or `ll`), `%p` and `%s` (the string's address; the kernel copies it),
//! at most 12 of them. bpftrace refuses more than three; weft passes them
//! to `bpf_trace_vprintk`.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat { debugf("open %s by %d", str(args->filename), pid); }`
//!
//! Lowering: `codegen::lower::builtins::debugf`.

use super::printf::literal_string;
use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "debugf",
    signature: "debugf(fmt, args...)",
    help: "writes the formatted line to the kernel's trace buffer (bpf_trace_printk), for debugging",
    check,
    aggregates: false,
};

/// The most arguments `bpf_trace_vprintk` takes (`MAX_BPRINTF_VARARGS`).
pub const MAX_ARGS: usize = 12;

/// The arguments `bpf_trace_printk` itself takes; more go through
/// `bpf_trace_vprintk`.
pub const PRINTK_ARGS: usize = 3;

/// The conversions the kernel's formatter takes, as `abi::printf` names
/// their specifiers.
const INTEGER_SPECIFIERS: [&str; 12] = [
    "d", "i", "u", "x", "ld", "li", "lu", "lx", "lld", "lli", "llu", "llx",
];

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    cx.error(diag::debugf_for_debugging(cx.call.span));
    let Some((first, rest)) = cx.args.split_first() else {
        cx.wrong_arg_count("a format string and its arguments");
        return Type::Void;
    };
    let Some(bytes) = literal_string(first) else {
        cx.check_all();
        cx.needs_literal(first.span, "debugf()'s format");
        return Type::Void;
    };
    let arg_types: Vec<Type> = rest.iter().map(|a| cx.check(a)).collect();
    let parsed = abi::printf::Format::parse(&String::from_utf8_lossy(bytes));
    if let Err(err) = parsed.validate() {
        cx.error(diag::printf_format(first.span, &err.message));
        return Type::Void;
    }
    let conversions = parsed.conversions();
    if conversions.len() != rest.len() {
        cx.error(diag::printf_args(cx.call.span, conversions.len(), rest.len()));
        return Type::Void;
    }
    if rest.len() > MAX_ARGS {
        cx.error(diag::debugf_format(
            cx.call.span,
            &format!("{} arguments, more than the kernel's {MAX_ARGS}", rest.len()),
        ));
        return Type::Void;
    }
    for ((conv, arg), t) in conversions.iter().zip(rest).zip(&arg_types) {
        let spec = conv.specifier.as_str();
        let fits = if INTEGER_SPECIFIERS.contains(&spec) || spec == "p" {
            t.is_scalar()
        } else if spec == "s" {
            t.is_str()
        } else {
            cx.error(diag::debugf_format(
                first.span,
                &format!("the kernel does not format `%{spec}`"),
            ));
            continue;
        };
        if !fits {
            let expected = if spec == "s" { "a string" } else { "an integer" };
            cx.error(diag::type_mismatch(
                arg.span,
                &format!("debugf()'s `%{spec}`"),
                expected,
                t,
            ));
        }
    }
    Type::Void
}
