//! bpftrace's standard-library macros over a task, put in after the
//! script's own macros are expanded (so a script's `macro pcomm()` wins),
//! as the member reads they stand for:
//!
//! - `ppid([task])`: `task->real_parent->pid`, the parent's pid;
//! - `pcomm([task])`: `task->real_parent->comm`, the parent's name;
//! - `leader_tid([task])`: `task->group_leader->pid`, the thread group
//!   leader's thread id (the process id);
//! - `leader_comm([task])`: `task->group_leader->comm`, its name;
//!
//! `task` is `curtask` when not given, and each may be written bare
//! (`pcomm`), as bpftrace's zero-argument macros may. The reads go through
//! BTF like any member access, so a diagnostic about them points at the call.

use crate::ast::*;
use crate::visit::{VisitMut, walk_expr, walk_items};

/// The macro `name` stands for: the two `task_struct` members it reads.
fn members(name: &str) -> Option<[&'static str; 2]> {
    Some(match name {
        "ppid" => ["real_parent", "pid"],
        "pcomm" => ["real_parent", "comm"],
        "leader_tid" => ["group_leader", "pid"],
        "leader_comm" => ["group_leader", "comm"],
        _ => return None,
    })
}

/// Rewrites every use of the macros above in `program`.
pub fn expand_task_macros(program: &mut Program) {
    let mut pass = Expand {
        next_id: program.node_count,
    };
    walk_items(&mut pass, &mut program.items);
    program.node_count = pass.next_id;
}

struct Expand {
    next_id: u32,
}

impl Expand {
    fn node(&mut self, kind: ExprKind, span: source::Span) -> Expr {
        let id = NodeId(self.next_id);
        self.next_id += 1;
        Expr { id, kind, span }
    }
}

impl VisitMut for Expand {
    fn visit_expr(&mut self, e: &mut Expr) {
        walk_expr(self, e);
        let ([link, member], task) = match &mut e.kind {
            ExprKind::Ident(name) => match members(name) {
                Some(m) => (m, None),
                None => return,
            },
            ExprKind::Call { name, args, .. } if args.len() <= 1 => match members(name) {
                Some(m) => (m, args.pop()),
                None => return,
            },
            _ => return,
        };
        let task = match task {
            Some(t) => t,
            None => self.node(ExprKind::Ident("curtask".into()), e.span),
        };
        let linked = self.node(
            ExprKind::Field {
                expr: Box::new(task),
                name: link.into(),
                arrow: true,
            },
            e.span,
        );
        e.kind = ExprKind::Field {
            expr: Box::new(linked),
            name: member.into(),
            arrow: true,
        };
    }
}
