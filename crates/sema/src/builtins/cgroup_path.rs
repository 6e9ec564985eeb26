//! `cgroup_path(ID[, "FILTER"])`: a cgroup id, printed as the cgroup's path
//! in each mounted hierarchy, as bpftrace prints it.
//!
//! What it does: keeps the id (and which hierarchies to look in); user
//! space finds the directory with that id when the value is printed, in
//! printf's `%s`, as a map key or value: `unified:/system.slice/cron.service`.
//! Without a filter every hierarchy is searched (v2, named `unified`
//! wherever it is mounted, then each v1 controller by name), joined by
//! commas, as in bpftrace; `FILTER` is a wildcard on those names
//! (`cgroup_path(cgroup, "unified")` for the v2 path alone).
//!
//! Why it is limited: the path is looked up when printed, so a cgroup
//! removed by then prints empty; the filter must be a string literal.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat { @[cgroup_path(cgroup, "unified")] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::cgroup_path` (the id and the filter's index).

use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "cgroup_path",
    signature: "cgroup_path(id[, \"filter\"])",
    help: "the cgroup id printed as the cgroup's path in each hierarchy (filter: a wildcard on hierarchy names)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let (id, filter) = match cx.args {
        [id] => (id, "*".to_string()),
        [
            id,
            Expr {
                kind: ExprKind::Str(bytes),
                ..
            },
        ] => (id, String::from_utf8_lossy(bytes).into_owned()),
        [_, other] => {
            let span = other.span;
            cx.needs_literal(span, "cgroup_path()'s filter");
            return Type::CgroupPath;
        }
        _ => {
            cx.wrong_arg_count("a cgroup id and an optional filter");
            return Type::CgroupPath;
        }
    };
    let t = cx.check(id);
    cx.expect_int(id, &t, "cgroup_path()'s id");
    let index = cx.add_cgroup_path_filter(filter);
    cx.set_value(CallValue::Constant(index as i64));
    Type::CgroupPath
}
