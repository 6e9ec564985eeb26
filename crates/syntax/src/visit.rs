//! A mutable walk over the syntax tree: every expression, statement, block,
//! written type, span and node id, in source order. Passes that rewrite the
//! tree (macro expansion) override the hooks they need and call the `walk_*`
//! functions to go on into the children.

use source::Span;

use crate::ast::*;

/// Hooks called for each node; the defaults walk into the children.
pub trait VisitMut {
    fn visit_expr(&mut self, e: &mut Expr) {
        walk_expr(self, e);
    }

    fn visit_stmt(&mut self, s: &mut Stmt) {
        walk_stmt(self, s);
    }

    fn visit_block(&mut self, b: &mut Block) {
        walk_block(self, b);
    }

    fn visit_type(&mut self, t: &mut TypeName) {
        walk_type(self, t);
    }

    /// Every span of the tree, one by one.
    fn visit_span(&mut self, _span: &mut Span) {}

    /// Every node id (expressions, `let` and `for` variables).
    fn visit_id(&mut self, _id: &mut NodeId) {}
}

pub fn walk_block<V: VisitMut + ?Sized>(v: &mut V, b: &mut Block) {
    v.visit_span(&mut b.span);
    for s in &mut b.stmts {
        v.visit_stmt(s);
    }
    if let Some(t) = &mut b.tail {
        v.visit_expr(t);
    }
}

pub fn walk_type<V: VisitMut + ?Sized>(v: &mut V, t: &mut TypeName) {
    v.visit_span(&mut t.span);
    if let Some(of) = &mut t.of {
        walk_type_or_expr(v, of);
    }
}

pub fn walk_type_or_expr<V: VisitMut + ?Sized>(v: &mut V, t: &mut TypeOrExpr) {
    match t {
        TypeOrExpr::Type(t) => v.visit_type(t),
        TypeOrExpr::Expr(e) => v.visit_expr(e),
    }
}

pub fn walk_stmt<V: VisitMut + ?Sized>(v: &mut V, s: &mut Stmt) {
    v.visit_span(&mut s.span);
    match &mut s.kind {
        StmtKind::Expr(e) | StmtKind::Discard(e) | StmtKind::Return(Some(e)) => v.visit_expr(e),
        StmtKind::Assign { target, value, .. } => {
            v.visit_expr(target);
            v.visit_expr(value);
        }
        StmtKind::Let {
            id,
            name_span,
            ty,
            value,
            ..
        } => {
            v.visit_id(id);
            v.visit_span(name_span);
            if let Some(t) = ty {
                v.visit_type(t);
            }
            if let Some(e) = value {
                v.visit_expr(e);
            }
        }
        StmtKind::If {
            cond,
            then,
            else_branch,
        } => {
            v.visit_expr(cond);
            v.visit_block(then);
            if let Some(e) = else_branch {
                v.visit_stmt(e);
            }
        }
        StmtKind::Unroll { count: c, body } | StmtKind::While { cond: c, body } => {
            v.visit_expr(c);
            v.visit_block(body);
        }
        StmtKind::For {
            id,
            var_span,
            iter,
            body,
            ..
        } => {
            v.visit_id(id);
            v.visit_span(var_span);
            match iter {
                ForIter::Map(e) => v.visit_expr(e),
                ForIter::Range { start, end } => {
                    v.visit_expr(start);
                    v.visit_expr(end);
                }
            }
            v.visit_block(body);
        }
        StmtKind::Block(b) => v.visit_block(b),
        StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) | StmtKind::Import(_) => {}
    }
}

pub fn walk_expr<V: VisitMut + ?Sized>(v: &mut V, e: &mut Expr) {
    v.visit_id(&mut e.id);
    v.visit_span(&mut e.span);
    match &mut e.kind {
        ExprKind::Map { keys: items, .. } | ExprKind::Tuple(items) => {
            items.iter_mut().for_each(|i| v.visit_expr(i))
        }
        ExprKind::Call {
            args, name_span, ..
        } => {
            v.visit_span(name_span);
            args.iter_mut().for_each(|i| v.visit_expr(i));
        }
        ExprKind::Unary { expr: x, .. }
        | ExprKind::Field { expr: x, .. }
        | ExprKind::TupleIndex { expr: x, .. }
        | ExprKind::IncDec { target: x, .. } => v.visit_expr(x),
        ExprKind::Cast { ty, expr } => {
            v.visit_type(ty);
            v.visit_expr(expr);
        }
        ExprKind::Binary { lhs, rhs, .. }
        | ExprKind::Index {
            expr: lhs,
            index: rhs,
        } => {
            v.visit_expr(lhs);
            v.visit_expr(rhs);
        }
        ExprKind::Ternary { cond, then, else_ } => {
            v.visit_expr(cond);
            if let Some(t) = then {
                v.visit_expr(t);
            }
            v.visit_expr(else_);
        }
        ExprKind::Record(fields) => fields.iter_mut().for_each(|(_, x)| v.visit_expr(x)),
        ExprKind::Sizeof(t) | ExprKind::Typeof(t) | ExprKind::Offsetof { ty: t, .. } => {
            walk_type_or_expr(v, t)
        }
        ExprKind::Block(b) => v.visit_block(b),
        ExprKind::If { cond, then, else_ } => {
            v.visit_expr(cond);
            v.visit_block(then);
            if let Some(e) = else_ {
                v.visit_expr(e);
            }
        }
        ExprKind::Error
        | ExprKind::Int { .. }
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::Ident(_)
        | ExprKind::Var(_)
        | ExprKind::Positional(_)
        | ExprKind::PositionalCount => {}
    }
}

/// Every block of executable code in a program's items (probe predicates and
/// bodies, stream clauses and their keys, functions), for passes that rewrite
/// them; macro definitions are templates and are not visited.
pub fn walk_items<V: VisitMut + ?Sized>(v: &mut V, items: &mut [Item]) {
    for item in items {
        match item {
            Item::Probe(p) => {
                if let Some(pred) = &mut p.predicate {
                    v.visit_expr(pred);
                }
                v.visit_block(&mut p.body);
            }
            Item::Stream(st) => {
                for stage in &mut st.stages {
                    if let Some(pred) = &mut stage.predicate {
                        v.visit_expr(pred);
                    }
                    for key in stage.key.iter_mut().chain(&mut stage.links) {
                        v.visit_expr(&mut key.expr);
                    }
                    if let Some(b) = &mut stage.body {
                        v.visit_block(b);
                    }
                }
            }
            Item::Function(f) => v.visit_block(&mut f.body),
            Item::Shebang(_)
            | Item::Preprocessor(_)
            | Item::StructDef(_)
            | Item::Config(_)
            | Item::Import(_)
            | Item::MapDecl(_)
            | Item::Macro(_) => {}
        }
    }
}
