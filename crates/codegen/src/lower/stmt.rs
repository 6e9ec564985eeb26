//! Statements and control flow.

use sema::Type;
use syntax::ast::{AssignOp, BinaryOp, Block, Expr, ExprKind, ForIter, NodeId, Stmt, StmtKind};

use super::{LoopLabels, Lower};
use crate::asm::{AluOp, Cond, Label, Src, VReg, Width};

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
            StmtKind::Return(None) => self.return_now(),
            StmtKind::Return(Some(value)) => {
                let v = self.scalar(value);
                self.return_value(v);
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::For {
                id,
                var,
                iter: ForIter::Range { start, end },
                body,
                ..
            } => self.for_range(*id, var, start, end, body),
            StmtKind::For {
                id,
                var,
                iter: ForIter::Map(map),
                body,
                ..
            } => self.for_map(*id, var, map, body),
            // `import`: refused when checking.
            StmtKind::Import(_) => {}
        }
    }

    /// `for ($i : start..end)` on the kernel's numeric iterator (an open-coded
    /// iterator: the loop stays in this program, so the body reaches every
    /// variable, map and output as any other code): `bpf_iter_num_new` over
    /// [start, end) (32-bit bounds; none when start > end or past the
    /// kernel's 8M-iteration cap), `bpf_iter_num_next` until it gives NULL,
    /// then `bpf_iter_num_destroy`, which `return` and `exit()` call too.
    fn for_range(&mut self, id: NodeId, var: &str, start: &Expr, end: &Expr, body: &Block) {
        let (Some(_), Some(place)) = (self.probe.range_iter, self.var_place(id, var)) else {
            return;
        };
        let iter = self.asm.stack(8);
        let from = self.scalar(start);
        let to = self.scalar(end);
        self.start_range_iter(iter, from, to);
        let (top, brk) = (self.asm.label(), self.asm.label());
        self.asm.bind(top);
        // The iterator's `int`, sign-extended.
        let value = self.next_range_value(iter, brk);
        self.asm.alu(AluOp::Lsh, value, Src::Imm(32));
        self.asm.alu(AluOp::Arsh, value, Src::Imm(32));
        self.store(place, Src::Reg(value), Width::DW);
        self.loops.push(LoopLabels { brk, cont: top });
        self.range_iters.push(iter);
        self.block(body);
        self.range_iters.pop();
        self.loops.pop();
        self.asm.jmp(top);
        self.asm.bind(brk);
        self.destroy_range_iter(iter);
    }

    /// Starts the numeric iterator in `iter` over [from, to).
    pub(crate) fn start_range_iter(&mut self, iter: crate::asm::Slot, from: VReg, to: VReg) {
        let Some(kf) = self.probe.range_iter else {
            return;
        };
        let it = self.asm.vreg();
        self.asm.stack_addr(it, iter, 0);
        self.asm
            .call_kfunc(kf.new, &[Src::Reg(it), Src::Reg(from), Src::Reg(to)], None);
    }

    /// The iterator's next `int` (its 32 bits, not sign-extended), or a
    /// jump to `done` when it has none left.
    pub(crate) fn next_range_value(&mut self, iter: crate::asm::Slot, done: Label) -> VReg {
        let Some(kf) = self.probe.range_iter else {
            self.asm.jmp(done);
            return self.asm.vreg();
        };
        let it = self.asm.vreg();
        self.asm.stack_addr(it, iter, 0);
        let cur = self.asm.vreg();
        self.asm.call_kfunc(kf.next, &[Src::Reg(it)], Some(cur));
        self.asm.br(Cond::Eq, cur, Src::Imm(0), done);
        let value = self.asm.vreg();
        self.asm.load(value, cur, 0, Width::W);
        value
    }

    /// Ends a range loop's iterator (the verifier wants each one ended).
    pub(crate) fn destroy_range_iter(&mut self, iter: crate::asm::Slot) {
        let Some(kf) = self.probe.range_iter else {
            return;
        };
        let it = self.asm.vreg();
        self.asm.stack_addr(it, iter, 0);
        self.asm.call_kfunc(kf.destroy, &[Src::Reg(it)], None);
    }

    fn assign(&mut self, target: &Expr, op: AssignOp, value: &Expr) {
        match (&target.kind, op) {
            (ExprKind::Map { keys, .. }, AssignOp::Assign) => {
                // An aggregation folds into the element; any other value is stored.
                let folded = self.aggregate_into(value, target, keys);
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
                if matches!(bop, BinaryOp::Add | BinaryOp::Sub)
                    && self.ty(target).is_int()
                    && self.add_to_shared_field(place, value, bop == BinaryOp::Sub)
                {
                    return;
                }
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

    /// Folds the aggregation `value` into the map element `target[keys]`:
    /// a call, or a block whose value is one (its statements first). False
    /// when `value` is no aggregation.
    fn aggregate_into(&mut self, value: &Expr, target: &Expr, keys: &[Expr]) -> bool {
        if let ExprKind::Block(b) = &value.kind
            && let Some(tail) = &b.tail
            && matches!(self.ty(value), Type::Agg(_))
        {
            self.statements(b);
            return self.aggregate_into(tail, target, keys);
        }
        self.builtin_aggregate(value, target, keys)
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
            // `c ? printf(..) : printf(..)`: one effect or the other.
            ExprKind::Ternary { cond, then, else_ } if !self.ty(e).is_scalar() => {
                let c = self.scalar(cond);
                let (other, done) = (self.asm.label(), self.asm.label());
                self.asm.br(Cond::Eq, c, Src::Imm(0), other);
                if let Some(t) = then {
                    self.effect(t);
                }
                self.asm.jmp(done);
                self.asm.bind(other);
                self.effect(else_);
                self.asm.bind(done);
            }
            ExprKind::IncDec { op, target, .. }
                if matches!(target.kind, ExprKind::Var(_)) && self.ty(target).is_int() =>
            {
                let ExprKind::Var(name) = &target.kind else {
                    return;
                };
                let step = self.probe.scales.get(&target.id).copied().unwrap_or(1) as i64;
                let delta = if *op == syntax::ast::IncDecOp::Inc {
                    step
                } else {
                    -step
                };
                match self.var_place(target.id, name) {
                    Some(place) if self.add_to_shared_field_const(place, delta) => {}
                    _ => {
                        self.scalar(e);
                    }
                }
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
