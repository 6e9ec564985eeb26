//! `signal(SIG)`: sends a signal to the process whose event the probe sees.
//!
//! What it does: `bpf_send_signal` from the probe, to the current task's
//! process, as bpftrace does: `signal("SIGKILL")`, `signal(19)`, or an
//! integer expression. A name may be written with or without `SIG`.
//!
//! Why it is limited: it changes the system, so it needs `--unsafe`; it
//! works only in probes that run in a task's context (kprobe, uprobe,
//! USDT, tracepoint, raw tracepoint, profile and the other perf events,
//! stream clauses), not in BEGIN, END or interval, where the current task
//! is weft itself or whichever task the timer interrupted. A constant
//! must be a signal (1 to 64).
//!
//! Example: `tracepoint:syscalls:sys_enter_kill /comm == "stress"/ { signal("SIGSTOP"); }`
//!
//! Lowering: `codegen::lower::builtins::signal` (one helper call).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "signal",
    signature: "signal(SIG)",
    help: "sends signal SIG (a name or number) to the current process (--unsafe)",
    check,
    aggregates: false,
};

/// Linux's signal numbers by name (x86-64, arm64 and most others).
const SIGNALS: &[(&str, i64)] = &[
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ILL", 4),
    ("TRAP", 5),
    ("ABRT", 6),
    ("IOT", 6),
    ("BUS", 7),
    ("FPE", 8),
    ("KILL", 9),
    ("USR1", 10),
    ("SEGV", 11),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
    ("STKFLT", 16),
    ("CHLD", 17),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("TTIN", 21),
    ("TTOU", 22),
    ("URG", 23),
    ("XCPU", 24),
    ("XFSZ", 25),
    ("VTALRM", 26),
    ("PROF", 27),
    ("WINCH", 28),
    ("IO", 29),
    ("POLL", 29),
    ("PWR", 30),
    ("SYS", 31),
];

/// The number of signal `name` (`SIGKILL` or `KILL`).
pub fn signal_number(name: &str) -> Option<i64> {
    let bare = name.strip_prefix("SIG").unwrap_or(name);
    SIGNALS.iter().find(|(n, _)| *n == bare).map(|(_, v)| *v)
}

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    cx.require_unsafe("sends a signal");
    let provider = cx.probe().provider;
    if !crate::providers::pid_filter_applies(provider) {
        let d = diag::not_in_this_probe(
            cx.call.span,
            "signal",
            provider,
            "probes that run in a task's context: kprobe, uprobe, usdt, tracepoint, rawtracepoint, profile, software, hardware and stream clauses",
        );
        cx.error(d);
    }
    let arg = match cx.args {
        [a] => a,
        _ => {
            cx.wrong_arg_count("a signal name or number");
            return Type::Void;
        }
    };
    match &arg.kind {
        ExprKind::Str(bytes) => {
            let name = String::from_utf8_lossy(bytes).into_owned();
            match signal_number(&name) {
                Some(n) => cx.set_value(CallValue::Constant(n)),
                None => cx.error(diag::invalid_signal(arg.span, &name)),
            }
        }
        ExprKind::Int { value, .. } => {
            if (1..=64).contains(value) {
                cx.set_value(CallValue::Constant(*value as i64));
            } else {
                cx.error(diag::invalid_signal(arg.span, &value.to_string()));
            }
        }
        _ => {
            let t = cx.check(arg);
            expect_number(cx, arg, &t);
        }
    }
    Type::Void
}

fn expect_number(cx: &mut CallCheck<'_, '_>, arg: &Expr, t: &Type) {
    cx.expect_int(arg, t, "signal()'s signal");
}
