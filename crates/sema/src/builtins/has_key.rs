//! `has_key(@m, key)`: whether the map `@m` holds an element at `key`, a
//! `bool`, as bpftrace's standard library has it.
//!
//! What it does: the key is checked as `@m[key]` would be (a tuple for a
//! map of several keys: `has_key(@m, (1, "a"))`) and looked up without
//! creating the element. A map without keys is an error in bpftrace's words.
//!
//! Example: `tracepoint:syscalls:sys_exit_read /has_key(@start, tid)/ { ... }`
//!
//! Lowering: `codegen::lower::builtins::has_key` (`bpf_map_lookup_elem`).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "has_key",
    signature: "has_key(@m, key)",
    help: "whether the map @m holds an element at key",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let (m, key) = match cx.args {
        [
            m @ Expr {
                kind: ExprKind::Map { keys, .. },
                ..
            },
            key,
        ] if keys.is_empty() => (m, key),
        _ => {
            cx.check_non_map_args();
            cx.wrong_arg_count("a map and a key, like `has_key(@m, k)`");
            return Type::Bool;
        }
    };
    if let Some(info) = cx.map_info(m)
        && info.key.is_none()
    {
        cx.check(key);
        cx.map_ref(m, None);
        cx.error(diag::map_needs_keys(
            m.span,
            "has_key",
            &info.name,
            info.first_assigned,
        ));
        return Type::Bool;
    }
    cx.map_ref(m, Some(&vec![key.clone()]));
    Type::Bool
}

