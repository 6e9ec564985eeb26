//! `print(@m[, top[, div]])`: prints a map now, as at exit: its `top`
//! largest entries (all when 0), values divided by `div`; a keyless map
//! nothing has written shows its zero. `print(value)`: prints any other
//! value (a variable, a literal, a tuple, a map element, a builtin) on a
//! line of its own, as bpftrace's current release does (JSON: a `value`
//! record). Done by user space when it reads the probe's record.
//!
//! Why it is limited: a value must be one weft can store (a struct held
//! by value is not yet).
//!
//! Lowering: `codegen::lower::builtins::print` (a record naming the map,
//! or the value in a record laid out as a printf's).

use abi::PrintfAction;
use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::{CallValue, PrintfSite};
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "print",
    signature: "print(@m[, top[, div]]) or print(value)",
    help: "prints a map now (its top entries, values divided by div), or a value",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    match cx.args {
        [
            m @ Expr {
                kind: ExprKind::Map { keys, .. },
                ..
            },
            rest @ ..,
        ] if keys.is_empty() && rest.len() <= 2 => {
            cx.map_ref(m, None);
            for r in rest {
                let t = cx.check(r);
                cx.expect_int(r, &t, "print()'s top and div");
            }
        }
        [v] => {
            let t = cx.check(v);
            if !crate::check::is_storable(&t) {
                let d = diag::type_mismatch(v.span, "print()", "a map or a value", &t);
                cx.error(d);
                return Type::Void;
            }
            let site = cx.add_printf(PrintfSite {
                format: abi::printf::Format::parse(""),
                args: vec![t.stored()],
                action: PrintfAction::Value,
                span: cx.call.span,
            });
            cx.set_value(CallValue::Site(site));
        }
        _ => cx.wrong_arg_count("a map and up to two integers, or one value"),
    }
    Type::Void
}
