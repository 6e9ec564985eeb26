//! `ntop([af, ]addr)`: an IPv4 or IPv6 address as text (`127.0.0.1`, `::1`).
//!
//! What it does: takes an integer (an IPv4 address in network order) or a
//! 4- or 16-byte array (a tracepoint's `__u8 saddr[4]`, a struct member
//! such as `skc_v6_daddr.in6_u.u6_addr8`, `pton("::1")`), with the family from `af` or,
//! without it, from the size (16 bytes: IPv6). Printed as bpftrace prints it.
//!
//! Example: `tracepoint:sock:inet_sock_set_state { @[ntop(args->daddr)] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::ntop` (`family: u64`, then 16 bytes).

use ktypes::FieldKind;

use super::{CallCheck, FunctionDef};
use crate::check::members::MemberValue;
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "ntop",
    signature: "ntop([af, ]addr)",
    help: "an IPv4 or IPv6 address as text",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let args = cx.args;
    let addr = match args {
        [a] => a,
        [af, a] => {
            let t = cx.check(af);
            cx.expect_int(af, &t, "ntop()'s address family");
            a
        }
        _ => {
            cx.wrong_arg_count("an address, optionally after its family");
            return Type::Inet;
        }
    };
    let t = cx.check(addr);
    // A tracepoint's byte array, or a struct member's
    // (`$sk->__sk_common.skc_v6_daddr.in6_u.u6_addr8`).
    let array_len = cx
        .field(addr)
        .and_then(|f| match f.field.kind {
            FieldKind::Array { len } if f.field.size == len => Some(len),
            _ => None,
        })
        .or_else(|| match cx.member(addr)?.value {
            MemberValue::Chars { len } => Some(len),
            _ => None,
        });
    let fits = match array_len {
        Some(len) => matches!(len, 4 | 16),
        None => t.is_scalar() || byte_array_len(&t).is_some(),
    };
    if !fits {
        cx.error(diag::type_mismatch(
            addr.span,
            "ntop()",
            "an integer or a 4- or 16-byte array",
            &t,
        ));
    }
    Type::Inet
}

/// The length of a 4- or 16-byte array value (`pton()`'s, a variable
/// holding one), which `ntop()` reads as an address.
pub fn byte_array_len(t: &Type) -> Option<u32> {
    match t {
        Type::Array { elem, len: len @ (4 | 16) } if matches!(**elem, Type::Int { size: 1, .. }) => {
            Some(*len)
        }
        _ => None,
    }
}
