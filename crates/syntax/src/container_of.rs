//! bpftrace's standard-library macro `container_of(ptr, type, member)`,
//! put in after the script's own macros are expanded (so a script's
//! `macro container_of(...)` wins), as the expression it stands for:
//! `(type *)((void *)ptr - offsetof(type, member))`, a pointer to the
//! `type` object whose `member` `ptr` points to (the kernel's macro of the
//! same name). `type` is written `typeof(struct Foo)` (or `typeof(expr)`),
//! `member` as a name or a path (`a.b`); any other form stays a call, which
//! the checker reports. The cast, the subtraction and `offsetof` are
//! checked as if written out, so a diagnostic about them points at the call.

use crate::ast::*;
use crate::visit::{VisitMut, walk_expr, walk_items};

/// Rewrites every `container_of(ptr, type, member)` call in `program`.
pub fn expand_container_of(program: &mut Program) {
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

/// `a`, `a.b`: the member path of `offsetof`.
fn member_path(e: &Expr) -> Option<Vec<String>> {
    match &e.kind {
        ExprKind::Ident(name) => Some(vec![name.clone()]),
        ExprKind::Field {
            expr,
            name,
            arrow: false,
        } => {
            let mut path = member_path(expr)?;
            path.push(name.clone());
            Some(path)
        }
        _ => None,
    }
}

impl VisitMut for Expand {
    fn visit_expr(&mut self, e: &mut Expr) {
        walk_expr(self, e);
        let ExprKind::Call { name, args, .. } = &mut e.kind else {
            return;
        };
        if name != "container_of" || args.len() != 3 {
            return;
        }
        let ExprKind::Typeof(of) = &args[1].kind else {
            return;
        };
        let Some(fields) = member_path(&args[2]) else {
            return;
        };
        let ty = match of {
            TypeOrExpr::Type(t) => t.clone(),
            TypeOrExpr::Expr(_) => TypeName {
                base: "typeof".into(),
                pointer_depth: 0,
                array_len: None,
                of: Some(Box::new(of.clone())),
                span: args[1].span,
            },
        };
        let ptr = args.swap_remove(0);
        let span = e.span;
        let void_ptr = TypeName {
            base: "void".into(),
            pointer_depth: 1,
            array_len: None,
            of: None,
            span,
        };
        let address = self.node(
            ExprKind::Cast {
                ty: void_ptr,
                expr: Box::new(ptr),
            },
            span,
        );
        let offset = self.node(
            ExprKind::Offsetof {
                ty: TypeOrExpr::Type(ty.clone()),
                fields,
            },
            span,
        );
        let start = self.node(
            ExprKind::Binary {
                op: BinaryOp::Sub,
                lhs: Box::new(address),
                rhs: Box::new(offset),
            },
            span,
        );
        e.kind = ExprKind::Cast {
            ty: TypeName {
                pointer_depth: ty.pointer_depth + 1,
                ..ty
            },
            expr: Box::new(start),
        };
    }
}
