//! Statements and control flow.

use sema::Type;
use syntax::ast::{AssignOp, Block, Expr, ExprKind, Stmt, StmtKind};

use super::{LoopLabels, Lower};
use crate::asm::{Src, Width};

impl Lower<'_> {
    pub(crate) fn block(&mut self, block: &Block) {
        self.statements(block);
        if let Some(tail) = &block.tail {
            self.effect(tail);
        }
    }

    /// A block's statements, without its value.
    pub(crate) fn statements(&mut self, block: &Block) {
        for stmt in &block.stmts {
            // A statement's temporaries (keys, values, strings, printf
            // records) are dead once it is done: the next one reuses their
            // stack. Variables have their slots from the start.
            let mark = self.asm.stack_mark();
            self.stmt(stmt);
            self.asm.stack_release(mark);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        self.set_span(stmt.span);
        match &stmt.kind {
            StmtKind::Expr(e) | StmtKind::Discard(e) => self.effect(e),
            StmtKind::Assign { target, op, value } => self.assign(target, *op, value),
            StmtKind::Let {
                id, name, value, ..
            } => match value {
                Some(v) => self.assign_var(*id, name, v),
                // `let $x;` makes `$x` zero each time it runs (in a loop, each iteration).
                None => {
                    if let Some(place) = self.var_place(*id, name) {
                        let key = self.probe.var_key(*id, name);
                        let t = self.probe.vars.get(key).cloned().unwrap_or(Type::I64);
                        let size = t.layout().size().max(8).next_multiple_of(8);
                        self.zero(place, size);
                    }
                }
            },
            StmtKind::If {
                cond,
                then,
                else_branch,
            } => {
                let (other, done) = (self.asm.label(), self.asm.label());
                self.branch_on(cond, false, other);
                self.block(then);
                self.asm.jmp(done);
                self.asm.bind(other);
                if let Some(e) = else_branch {
                    self.stmt(e);
                }
                self.asm.bind(done);
            }
            StmtKind::While { cond, body } => {
                let (top, brk) = (self.asm.label(), self.asm.label());
                self.asm.bind(top);
                self.branch_on(cond, false, brk);
                self.loops.push(LoopLabels { brk, cont: top });
                self.block(body);
                self.loops.pop();
                self.asm.jmp(top);
                self.asm.bind(brk);
            }
            StmtKind::Unroll { count, body } => {
                let n = match count.kind {
                    ExprKind::Int { value, .. } => value.min(100),
                    _ => 0,
                };
                for _ in 0..n {
                    self.block(body);
                }
            }
            StmtKind::Break | StmtKind::Continue => {
                if let Some(l) = self.loops.last() {
                    let target = if matches!(stmt.kind, StmtKind::Break) {
                        l.brk
                    } else {
                        l.cont
                    };
                    self.asm.jmp(target);
                }
            }
            StmtKind::Return(_) => self.return_now(),
            StmtKind::Block(b) => self.block(b),
            StmtKind::For { .. } | StmtKind::Import(_) => {}
        }
    }

    fn assign(&mut self, target: &Expr, op: AssignOp, value: &Expr) {
        match (&target.kind, op) {
            (ExprKind::Map { keys, .. }, AssignOp::Assign) => {
                // An aggregation folds into the element; any other value is stored.
                let folded = self.builtin_aggregate(value, target, keys);
                if !folded {
                    self.map_store(target, keys, value);
                }
            }
            (ExprKind::Map { keys, .. }, AssignOp::Compound(bop)) => {
                self.map_add(target, keys, Some((bop, value)), 0, true);
            }
            (ExprKind::Var(name), AssignOp::Assign) => self.assign_var(target.id, name, value),
            (ExprKind::Var(name), AssignOp::Compound(bop)) => {
                let Some(place) = self.var_place(target.id, name) else {
                    return;
                };
                let rewritten = Expr {
                    id: target.id,
                    span: target.span.to(value.span),
                    kind: ExprKind::Binary {
                        op: bop,
                        lhs: Box::new(target.clone()),
                        rhs: Box::new(value.clone()),
                    },
                };
                // The checker typed `target` and `value`; the synthetic node reuses
                // the target's id, whose type is the variable's.
                let v = self.scalar(&rewritten);
                self.store(place, Src::Reg(v), Width::DW);
            }
            _ => {}
        }
    }

    fn assign_var(&mut self, id: syntax::ast::NodeId, name: &str, value: &Expr) {
        let Some(place) = self.var_place(id, name) else {
            return;
        };
        let key = self.probe.var_key(id, name);
        let t = self.probe.vars.get(key).cloned().unwrap_or(Type::I64);
        self.write_into(value, place, &t);
    }

    /// An expression evaluated for its effect.
    pub(crate) fn effect(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Block(b) => self.block(b),
            ExprKind::If { cond, then, else_ } => {
                let (other, done) = (self.asm.label(), self.asm.label());
                self.branch_on(cond, false, other);
                self.block(then);
                self.asm.jmp(done);
                self.asm.bind(other);
                if let Some(e) = else_ {
                    self.effect(e);
                }
                self.asm.bind(done);
            }
            ExprKind::Call { .. } => {
                self.builtin_effect(e);
            }
            ExprKind::IncDec { .. } => {
                self.scalar(e);
            }
            _ => {
                let t = self.ty(e);
                if t.is_scalar() {
                    self.scalar(e);
                }
            }
        }
    }
}
