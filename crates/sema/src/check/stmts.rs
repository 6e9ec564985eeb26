//! Statements: blocks, `if`/`while`/`unroll`, `let`, assignments to maps
//! (an aggregation call stored as the map's aggregation) and to variables
//! (a variable keeps a pointer's C type and an integer's width).

use source::Span;
use syntax::ast::{AssignOp, BinaryOp, Block, Expr, ExprKind, ForIter, Stmt, StmtKind};

use super::{Checker, Scope, is_storable};
use crate::diagnostics as diag;
use crate::types::Type;

impl Checker<'_> {
    pub(super) fn block(&mut self, s: &mut Scope, block: &Block) {
        for stmt in &block.stmts {
            self.stmt(s, stmt);
        }
        if let Some(tail) = &block.tail {
            self.expr(s, tail);
        }
    }

    pub(super) fn stmt(&mut self, s: &mut Scope, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Expr(e) | StmtKind::Discard(e) => {
                self.expr(s, e);
            }
            StmtKind::Assign { target, op, value } => self.assign(s, target, *op, value),
            StmtKind::Let {
                name,
                name_span,
                ty,
                value,
            } => {
                let declared = ty.as_ref().and_then(|t| self.type_name(t));
                let value_ty = value.as_ref().map(|v| self.expr(s, v));
                let t = match (declared, value_ty) {
                    (Some(d), Some(v)) => {
                        if d.unify(&v.stored()).is_none() {
                            self.error(diag::variable_type_mismatch(
                                value.as_ref().unwrap().span,
                                name,
                                &d,
                                &v,
                            ));
                        }
                        d
                    }
                    (Some(d), None) => d,
                    (None, Some(v)) => v.stored(),
                    (None, None) => {
                        self.error(diag::not_supported_yet(
                            *name_span,
                            "`let` without a type or value",
                        ));
                        return;
                    }
                };
                self.define_var(s, name, t, stmt.span);
            }
            StmtKind::If {
                cond,
                then,
                else_branch,
            } => {
                let t = self.expr(s, cond);
                self.expect_condition(cond, &t);
                self.block(s, then);
                if let Some(e) = else_branch {
                    self.stmt(s, e);
                }
            }
            StmtKind::While { cond, body } => {
                let t = self.expr(s, cond);
                self.expect_condition(cond, &t);
                s.loop_depth += 1;
                self.block(s, body);
                s.loop_depth -= 1;
            }
            StmtKind::Unroll { count, body } => {
                match &count.kind {
                    ExprKind::Int { value, .. } if (1..=100).contains(value) => {}
                    ExprKind::Int { .. } => self.error(diag::unroll_count_out_of_range(count.span)),
                    _ => self.error(diag::needs_literal(count.span, "the unroll count")),
                }
                self.block(s, body);
            }
            StmtKind::For { iter, var_span, .. } => {
                let span = match iter {
                    ForIter::Map(e) => e.span,
                    ForIter::Range { start, .. } => start.span,
                };
                self.error(diag::not_supported_yet(var_span.to(span), "a `for` loop"));
            }
            StmtKind::Break | StmtKind::Continue => {
                if s.loop_depth == 0 {
                    self.error(diag::break_outside_loop(stmt.span));
                }
            }
            StmtKind::Return(value) => {
                if let Some(v) = value {
                    self.error(diag::not_supported_yet(
                        v.span,
                        "a value after `return` in a probe",
                    ));
                }
            }
            StmtKind::Block(b) => self.block(s, b),
            StmtKind::Import(_) => self.error(diag::not_supported_yet(stmt.span, "`import`")),
        }
    }

    pub(super) fn define_var(&mut self, s: &mut Scope, name: &str, t: Type, span: Span) {
        match s.probe.vars.get(name) {
            Some(existing) => match existing.unify(&t) {
                Some(u) => {
                    s.probe.vars.insert(name.to_string(), u);
                }
                None => {
                    let existing = existing.clone();
                    self.error(diag::variable_type_mismatch(span, name, &existing, &t));
                }
            },
            None => {
                s.probe.vars.insert(name.to_string(), t);
            }
        }
    }

    pub(super) fn assign(&mut self, s: &mut Scope, target: &Expr, op: AssignOp, value: &Expr) {
        match (&target.kind, op) {
            (ExprKind::Map { name, keys }, AssignOp::Assign) => {
                let aggregation = match &value.kind {
                    ExprKind::Call { name: f, args, .. } => crate::builtins::function_def(f)
                        .filter(|def| def.aggregates)
                        .map(|def| (def, args)),
                    _ => None,
                };
                let value_ty = match aggregation {
                    Some((def, args)) => match self.builtin_call(s, value, def, args, true) {
                        t @ Type::Agg(_) => {
                            s.probe.types.insert(value.id, t.clone());
                            t
                        }
                        // The rule said why.
                        _ => return,
                    },
                    None => {
                        let t = self.expr(s, value);
                        if !is_storable(&t) {
                            self.error(diag::type_mismatch(
                                value.span,
                                "a map value",
                                "a storable value",
                                &t,
                            ));
                            return;
                        }
                        t.stored()
                    }
                };
                let key = self.map_key(s, keys);
                self.store_map(s, target, name, key, value_ty, value.span);
            }
            (ExprKind::Map { name, keys }, AssignOp::Compound(bop)) => {
                let vt = self.expr(s, value);
                self.expect_int(
                    value,
                    &vt,
                    &format!("`{}`", AssignOp::Compound(bop).as_str()),
                );
                let key = self.map_key(s, keys);
                let t = match bop {
                    BinaryOp::Add | BinaryOp::Sub => self.updated_map_value(name),
                    _ => Type::I64,
                };
                self.scale_update(s, target, &t);
                self.store_map(s, target, name, key, t, value.span);
            }
            (ExprKind::Var(name), AssignOp::Assign) => {
                let t = self.expr(s, value);
                if !is_storable(&t) {
                    self.error(diag::type_mismatch(
                        value.span,
                        "a variable",
                        "a storable value",
                        &t,
                    ));
                    return;
                }
                // A variable keeps a pointer's C type, so `$sk->member`
                // works after `$sk = (struct sock *)arg0`, and an integer's
                // width, so `bswap($dport)` swaps a `__be16` (as in bpftrace).
                let stored = match &t {
                    Type::Pointer { .. } | Type::Int { .. } => t.clone(),
                    _ => t.stored(),
                };
                self.define_var(s, name, stored.clone(), value.span);
                s.probe.types.insert(target.id, stored);
            }
            (ExprKind::Var(name), AssignOp::Compound(bop)) => {
                let vt = self.expr(s, value);
                self.expect_int(
                    value,
                    &vt,
                    &format!("`{}`", AssignOp::Compound(bop).as_str()),
                );
                match s.probe.vars.get(name).cloned() {
                    Some(t) => {
                        self.expect_int(
                            target,
                            &t,
                            &format!("`{}`", AssignOp::Compound(bop).as_str()),
                        );
                        if matches!(bop, BinaryOp::Add | BinaryOp::Sub) {
                            self.scale_update(s, target, &t);
                        }
                        s.probe.types.insert(target.id, t);
                    }
                    None => self.error(diag::undefined_variable(target.span, name)),
                }
            }
            _ => {
                self.expr(s, value);
                self.error(diag::not_assignable(target.span));
            }
        }
    }
}
