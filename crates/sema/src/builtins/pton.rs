//! `pton("ADDR")`: an IPv4 or IPv6 address written as text, as the bytes
//! of the address in network order: `int8[4]` or `int8[16]`, as bpftrace's
//! standard library has it.
//!
//! What it does: reads the literal when checking (a `:` makes it IPv6, a
//! `.` IPv4, as bpftrace infers the family), so the program holds only the
//! bytes; `ntop()` turns them back into text, and a comparison with a
//! tracepoint's `saddr` array selects packets by address.
//!
//! Why it is limited: the address must be a string literal.
//!
//! Example: `BEGIN { printf("%s\n", ntop(pton("::1"))); }`
//!
//! Lowering: `codegen::lower::builtins::pton` (the bytes stored in place).

use std::net::{Ipv4Addr, Ipv6Addr};

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "pton",
    signature: "pton(\"ADDR\")",
    help: "an IPv4 or IPv6 address as its bytes in network order",
    check,
    aggregates: false,
};

/// The bytes of the address `text` names, as `inet_pton(3)` gives them.
pub fn address_bytes(text: &str) -> Option<Vec<u8>> {
    if text.contains(':') {
        text.parse::<Ipv6Addr>().ok().map(|a| a.octets().to_vec())
    } else if text.contains('.') {
        text.parse::<Ipv4Addr>().ok().map(|a| a.octets().to_vec())
    } else {
        None
    }
}

/// The literal text of `pton(e)`'s argument, when it is one.
pub fn literal(args: &[Expr]) -> Option<String> {
    match args {
        [
            Expr {
                kind: ExprKind::Str(bytes),
                ..
            },
        ] => Some(String::from_utf8_lossy(bytes).into_owned()),
        _ => None,
    }
}

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let bytes = |len| Type::Array {
        elem: Box::new(Type::Int {
            size: 1,
            signed: true,
        }),
        len,
    };
    let [arg] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("one address, like `pton(\"127.0.0.1\")`");
        return bytes(4);
    };
    let Some(text) = literal(cx.args) else {
        cx.check(arg);
        cx.needs_literal(arg.span, "pton()'s address");
        return bytes(4);
    };
    match address_bytes(&text) {
        Some(b) => bytes(b.len() as u32),
        None => {
            cx.error(diag::invalid_ip_address(arg.span, &text));
            bytes(4)
        }
    }
}
