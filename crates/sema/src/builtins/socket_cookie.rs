//! `socket_cookie(sk)`: the kernel's cookie for socket `sk` (a `struct sock *`),
//! a `uint64` (`bpf_get_socket_cookie`), as bpftrace's current release has it.
//! The kernel makes one the first time it is asked and keeps it for the
//! socket's life; 0 when `sk` is NULL.
//!
//! Why it is limited: the kernel gives this helper (for a socket pointer) only
//! to BTF-typed tracing programs, and the verifier must know `sk` is a
//! socket: an argument of fentry/fexit, `tp_btf`, or `rawtracepoint` on a
//! kernel with BTF (which then loads as a tracing program:
//! `providers::rawtracepoint::as_tracing_program`), or a field reached from one.
//!
//! Example: `rawtracepoint:tcp_probe { @[socket_cookie(args.sk)] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::socket_cookie` (one helper call).

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "socket_cookie",
    signature: "socket_cookie(sk)",
    help: "the kernel's cookie for socket sk (a struct sock *): stable for the socket's life",
    check,
    aggregates: false,
};

/// Where helpers of BTF-typed tracing programs run, for help texts.
pub const TRACING_PROBES: &str =
    "BTF-typed tracing programs: fentry/fexit, tp_btf, and rawtracepoint on a kernel with BTF";

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    if !cx.probe().is_tracing_program() {
        let provider = cx.probe().provider;
        let d = diag::not_in_this_probe(cx.call.span, "socket_cookie", provider, TRACING_PROBES);
        cx.error(d);
    }
    match cx.args {
        [sk] => {
            let t = cx.check(sk);
            if !matches!(&t, Type::Pointer { .. }) {
                let d = diag::type_mismatch(sk.span, "socket_cookie()", "a `struct sock *`", &t);
                cx.error(d);
            }
        }
        _ => cx.wrong_arg_count("a socket (struct sock *)"),
    }
    Type::U64
}
