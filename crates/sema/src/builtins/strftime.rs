//! `strftime(fmt, ns)`: the time `ns` (nanoseconds of the monotonic clock,
//! as `nsecs` gives) as wall-clock text in strftime(3)'s `fmt`, with
//! bpftrace's `%f` for microseconds. The value is the time itself, kept in
//! variables, maps and tuples; user space formats it wherever it prints it
//! (printf's `%s`, `print()`, map keys and values, JSON). Two times of the
//! same second are still two map keys, as in bpftrace.
//!
//! Why it is limited: the format must be a string literal.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat { printf("%s\n", strftime("%H:%M:%S.%f", nsecs)); }`
//!
//! Lowering: `codegen::lower::builtins::strftime` (the nanoseconds, as a `u64`).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "strftime",
    signature: "strftime(fmt, ns)",
    help: "the time ns (from nsecs) as wall-clock text in strftime(3)'s format",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let args = cx.args;
    let (fmt, ns) = match args {
        [
            Expr {
                kind: ExprKind::Str(b),
                ..
            },
            ns,
        ] => (String::from_utf8_lossy(b).into_owned(), ns),
        [f, ..] if !matches!(f.kind, ExprKind::Str(_)) => {
            cx.needs_literal(f.span, "strftime()'s format");
            return Type::U64;
        }
        _ => {
            cx.wrong_arg_count("a format and a time in nanoseconds (`nsecs`)");
            return Type::U64;
        }
    };
    let t = cx.check(ns);
    cx.expect_int(ns, &t, "strftime()'s time");
    let format = cx.add_time_format(fmt) as u32;
    Type::Timestamp { format }
}
