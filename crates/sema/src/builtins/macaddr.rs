//! `macaddr(mac)`: the six bytes of a MAC address, printed `05:04:03:02:01:0A`
//! (`macaddr_t`), as bpftrace's standard library has it.
//!
//! What it does: takes the first 6 bytes of an array of at least 6 bytes
//! (a struct member such as `char mac[6]`, a tracepoint's array, a byte
//! array value) or reads them at an address (an integer or pointer).
//!
//! Why it is limited: a string literal is refused, as bpftrace refuses it.
//!
//! Example: `struct S { char mac[6]; } uprobe:./prog:f { printf("%s\n", macaddr(((struct S *)arg0)->mac)); }`
//!
//! Lowering: `codegen::lower::builtins::macaddr` (6 bytes copied or read).

use ktypes::FieldKind;
use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef};
use crate::check::members::MemberValue;
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "macaddr",
    signature: "macaddr(mac)",
    help: "the six bytes of a MAC address, printed as 05:04:03:02:01:0A",
    check,
    aggregates: false,
};

/// Where `macaddr()` takes its 6 bytes from.
pub enum MacSource {
    /// A struct member of this many bytes (`char mac[6]`).
    Member,
    /// A tracepoint's array field.
    Field,
    /// Read at the address the argument's value is.
    Address,
    /// A value held by the program (a byte array or string).
    Value,
}

/// Where the argument `e` of type `t` gives its bytes from, if it has 6.
pub fn source(
    member: Option<MemberValue>,
    field_len: Option<u32>,
    t: &Type,
) -> Option<MacSource> {
    match (member, field_len) {
        (Some(MemberValue::Chars { len } | MemberValue::Array { size: len }), _) => {
            (len >= 6).then_some(MacSource::Member)
        }
        (_, Some(len)) => (len >= 6).then_some(MacSource::Field),
        _ => match t {
            Type::Int { .. } | Type::Pointer { .. } => Some(MacSource::Address),
            Type::Str { size } if *size >= 6 => Some(MacSource::Value),
            Type::Array { elem, len } if *len >= 6 && matches!(**elem, Type::Int { size: 1, .. }) => {
                Some(MacSource::Value)
            }
            _ => None,
        },
    }
}

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let [arg] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("one array of 6 bytes or an address");
        return Type::MacAddr;
    };
    let t = cx.check(arg);
    if matches!(arg.kind, ExprKind::Str(_)) {
        cx.error(diag::type_mismatch(
            arg.span,
            "macaddr()",
            "an array or an address, not a string literal",
            &t,
        ));
        return Type::MacAddr;
    }
    let field_len = cx.field(arg).and_then(|f| match f.field.kind {
        FieldKind::Array { len } if f.field.size == len => Some(len),
        _ => None,
    });
    let member = cx.member(arg).map(|m| m.value);
    if source(member, field_len, &t).is_none() {
        cx.error(diag::type_mismatch(
            arg.span,
            "macaddr()",
            "an array of at least 6 bytes or an address",
            &t,
        ));
    }
    Type::MacAddr
}
