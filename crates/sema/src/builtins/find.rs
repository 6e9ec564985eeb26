//! `find(@m, key, $v)`: whether the map `@m` holds an element at `key`, a
//! `bool`; when it does, `$v` gets the element's value (one lookup where
//! `has_key` and `@m[key]` take two), as bpftrace's standard library has it.
//!
//! What it does: the key is checked as `@m[key]` would be, and `$v` is
//! assigned the map's value type (declared before with `let $v;`, or new
//! here). When the key is missing, `$v` keeps what it held. A map without
//! keys, or of an aggregation (read those with `@m[key]`), is an error.
//!
//! Example: `tracepoint:syscalls:sys_exit_read { let $ts; if (find(@start, tid, $ts)) { @ns = hist(nsecs - $ts); } }`
//!
//! Lowering: `codegen::lower::builtins::find` (`bpf_map_lookup_elem`, then
//! a copy of the value into the variable).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "find",
    signature: "find(@m, key, $v)",
    help: "whether the map @m holds key; if so, $v gets its value",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let (m, key, var) = match cx.args {
        [
            m @ Expr {
                kind: ExprKind::Map { keys, .. },
                ..
            },
            key,
            var,
        ] if keys.is_empty() => (m, key, var),
        _ => {
            cx.check_non_map_args();
            cx.wrong_arg_count("a map, a key and a variable, like `find(@m, k, $v)`");
            return Type::Bool;
        }
    };
    let info = cx.map_info(m);
    if let Some(info) = &info
        && info.key.is_none()
    {
        cx.check(key);
        cx.map_ref(m, None);
        cx.error(diag::map_needs_keys(
            m.span,
            "find",
            &info.name,
            info.first_assigned,
        ));
        return Type::Bool;
    }
    cx.map_ref(m, Some(&vec![key.clone()]));
    if !matches!(var.kind, ExprKind::Var(_)) {
        cx.error(diag::find_needs_a_variable(var.span));
        return Type::Bool;
    }
    match info.map(|i| i.value) {
        Some(Type::Agg(agg)) => {
            let what = format!("find() on a map of {}()", agg.name());
            cx.not_supported_yet(m.span, &what);
        }
        Some(value) => cx.assign_var(var, value),
        // Not stored anywhere yet: `@m[key]` says so when read.
        None => {}
    }
    Type::Bool
}
