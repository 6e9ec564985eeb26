//! Statements: blocks, `if`/`while`/`unroll`, `let`, assignments to maps
//! (an aggregation call stored as the map's aggregation) and to variables
//! (a variable keeps a pointer's C type and an integer's width).

use source::Span;
use syntax::ast::{AssignOp, BinaryOp, Block, Expr, ExprKind, ForIter, NodeId, Stmt, StmtKind};

use super::{Checker, Scope, is_storable};
use crate::diagnostics as diag;
use crate::types::Type;

impl Checker<'_> {
    /// A block in its own scope; its value is its tail's (`Void` without one).
    pub(super) fn block(&mut self, s: &mut Scope, block: &Block) -> Type {
        self.block_with(s, block, |this, s, tail| this.expr(s, tail))
    }

    /// [`Checker::block`] with its tail checked by `tail`.
    fn block_with(
        &mut self,
        s: &mut Scope,
        block: &Block,
        tail: impl FnOnce(&mut Self, &mut Scope, &Expr) -> Type,
    ) -> Type {
        s.scopes.push();
        let mut ended: Option<Span> = None;
        for stmt in &block.stmts {
            if let Some(end) = ended.take() {
                self.error(diag::unreachable_statement(stmt.span, end));
            }
            self.stmt(s, stmt);
            if ends_probe(stmt) {
                ended = Some(stmt.span);
            }
        }
        if let (Some(end), Some(tail)) = (ended, &block.tail) {
            self.error(diag::unreachable_statement(tail.span, end));
        }
        let t = match &block.tail {
            Some(t) => tail(self, s, t),
            None => Type::Void,
        };
        s.scopes.pop();
        t
    }

    /// The aggregation `@m = value` folds into the map: a call of one
    /// (`count()`), or a block whose value is one (`{ let $a = 1; avg($a) }`,
    /// its statements run first). `None` when `value` is no aggregation;
    /// `Some(None)` when its rule refused it (and said why).
    fn map_aggregation(&mut self, s: &mut Scope, value: &Expr) -> Option<Option<Type>> {
        match &value.kind {
            ExprKind::Call { name: f, args, .. } => {
                let def = crate::builtins::function_def(f).filter(|def| def.aggregates)?;
                Some(match self.builtin_call(s, value, def, args, true) {
                    t @ Type::Agg(_) => {
                        s.probe.types.insert(value.id, t.clone());
                        Some(t)
                    }
                    // The rule said why.
                    _ => None,
                })
            }
            ExprKind::Block(b) if b.tail.as_ref().is_some_and(|t| aggregates(t)) => {
                let mut found = None;
                let t = self.block_with(s, b, |this, s, tail| {
                    found = this.map_aggregation(s, tail).flatten();
                    found.clone().unwrap_or(Type::Void)
                });
                s.probe.types.insert(value.id, t);
                Some(found)
            }
            _ => None,
        }
    }

    pub(super) fn stmt(&mut self, s: &mut Scope, stmt: &Stmt) {
        match &stmt.kind {
            StmtKind::Expr(e) => {
                let errors = self.diags.error_count();
                let t = self.expr(s, e);
                // An expression found wrong has said enough.
                if self.diags.error_count() == errors && value_is_lost(e, &t) {
                    self.error(diag::return_value_discarded(e.span));
                }
            }
            StmtKind::Discard(e) => {
                self.expr(s, e);
            }
            StmtKind::Assign { target, op, value } => self.assign(s, target, *op, value),
            StmtKind::Let {
                id,
                name,
                name_span,
                ty,
                value,
            } => {
                let declared = match ty {
                    Some(t) => self.type_name(s, t),
                    None => None,
                };
                // The value is checked before the variable exists: `let $x = $x + 1` reads an outer `$x`.
                let value_ty = value.as_ref().map(|v| self.expr(s, v));
                let key = self.declare_var(s, *id, name, *name_span, "`let`");
                let t = match (declared, value_ty) {
                    (Some(d), Some(v)) => {
                        if let Some(value) = value
                            && sign_is_certain(value)
                            && assignable(&d, &v)
                            && !int_fits_into(&v, &d)
                        {
                            self.error(diag::implicit_sign_cast(value.span, &v, &d));
                        }
                        if !assignable(&d, &v) {
                            self.error(diag::variable_type_mismatch(
                                value.as_ref().map_or(stmt.span, |v| v.span),
                                name,
                                &d,
                                &v,
                            ));
                        }
                        d
                    }
                    (Some(d), None) => d,
                    (None, Some(v)) => var_storage(&v),
                    // Typed by its first assignment.
                    (None, None) => Type::Void,
                };
                if ty.is_some() {
                    s.scopes.typed.insert(key.clone());
                }
                s.probe.vars.insert(key, t);
            }
            StmtKind::If {
                cond,
                then,
                else_branch,
            } => {
                let t = self.expr(s, cond);
                self.expect_condition(cond, &t);
                let known = literal_condition(cond);
                let dead_then = u32::from(known == Some(false));
                s.never_taken += dead_then;
                self.block(s, then);
                s.never_taken -= dead_then;
                if let Some(e) = else_branch {
                    let dead_else = u32::from(known == Some(true));
                    s.never_taken += dead_else;
                    self.stmt(s, e);
                    s.never_taken -= dead_else;
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
                    ExprKind::Int { value, .. } => {
                        self.error(diag::unroll_count_out_of_range(count.span, *value))
                    }
                    _ => self.error(diag::needs_literal(count.span, "the unroll count")),
                }
                self.block(s, body);
            }
            StmtKind::For {
                id,
                var,
                var_span,
                iter,
                body,
            } => self.for_loop(s, *id, var, *var_span, iter, body),
            StmtKind::Break | StmtKind::Continue => {
                if s.loop_depth == 0 {
                    self.error(diag::break_outside_loop(stmt.span));
                }
            }
            StmtKind::Return(value) => {
                // The probe program's return value, as in bpftrace (most
                // probe types ignore it; a `bench:` probe skips with 1).
                if let Some(v) = value {
                    let t = self.expr(s, v);
                    self.expect_int(v, &t, "`return`'s value");
                }
            }
            StmtKind::Block(b) => {
                self.block(s, b);
            }
            StmtKind::Import(_) => self.error(diag::not_supported_yet(
                stmt.span,
                "`import` inside a block",
            )),
        }
    }

    /// Gives variable `key` (named `name`) the type `t`, or unifies it
    /// with the type it has.
    pub(super) fn define_var(&mut self, s: &mut Scope, key: &str, name: &str, t: Type, span: Span) {
        if s.scopes.typed.contains(key) {
            if let Some(declared) = s.probe.vars.get(key).cloned()
                && !assignable(&declared, &t)
            {
                self.error(diag::variable_type_mismatch(span, name, &declared, &t));
            }
            return;
        }
        match s.probe.vars.get(key) {
            Some(Type::Void) | None => {
                s.probe.vars.insert(key.to_string(), t);
            }
            Some(existing) => match existing.unify(&t) {
                Some(u) => {
                    s.probe.vars.insert(key.to_string(), u);
                }
                None if assignable(existing, &t) => {}
                None => {
                    let existing = existing.clone();
                    self.error(diag::variable_type_mismatch(span, name, &existing, &t));
                }
            },
        }
    }

    /// `for ($var : @map)` or `for ($var : start..end)`: the variable is
    /// declared in a scope of its own, around the body's.
    fn for_loop(
        &mut self,
        s: &mut Scope,
        id: NodeId,
        var: &str,
        var_span: Span,
        iter: &ForIter,
        body: &Block,
    ) {
        let elem = match iter {
            ForIter::Map(m) => {
                self.map_iter_helper(var_span.to(m.span));
                self.for_map_element(s, m)
            }
            ForIter::Range { start, end } => {
                for e in [start, end] {
                    let t = self.expr(s, e);
                    self.expect_int(e, &t, "a range bound");
                }
                self.range_iter(s, var_span.to(end.span), diag::IterUse::RangeLoop);
                Type::I64
            }
        };
        s.scopes.push();
        let key = self.declare_var(s, id, var, var_span, "this `for` loop");
        s.probe.vars.insert(key, elem);
        s.loop_depth += 1;
        self.block(s, body);
        s.loop_depth -= 1;
        s.scopes.pop();
    }

    /// The helper a map loop runs on (`bpf_for_each_map_elem`), which this
    /// kernel's BTF lists among its helper ids when it has it; a kernel
    /// without BTF is taken to have it (the verifier says if not).
    fn map_iter_helper(&mut self, span: Span) {
        let missing = self
            .kernel
            .and_then(|k| k.btf().ok())
            .is_some_and(|btf| btf.enum_value("BPF_FUNC_for_each_map_elem").is_none());
        if missing {
            self.error(diag::no_map_iterator(span));
        }
    }

    /// The kernel's numeric iterator, which a range loop runs on; a kernel
    /// without it (before 6.4, or without BTF) is told in one sentence.
    pub(super) fn range_iter(&mut self, s: &mut Scope, span: Span, usage: diag::IterUse) {
        if s.probe.range_iter.is_some() {
            return;
        }
        let kernel = self.kernel;
        let look_up = || {
            let kind = ktypes::btf::kind::FUNC;
            let btf = kernel?.btf().ok()?;
            Some(crate::RangeIter {
                new: btf.find(kind, "bpf_iter_num_new")?,
                next: btf.find(kind, "bpf_iter_num_next")?,
                destroy: btf.find(kind, "bpf_iter_num_destroy")?,
            })
        };
        let found = match self.range_iter {
            Some(cell) => *cell.get_or_init(look_up),
            None => look_up(),
        };
        match found {
            Some(ids) => s.probe.range_iter = Some(ids),
            None => self.error(diag::no_range_iterator(span, usage)),
        }
    }

    /// The element of `for ($kv : @map)`: the tuple `(key, value)`.
    fn for_map_element(&mut self, s: &mut Scope, m: &Expr) -> Type {
        let ExprKind::Map { name, keys } = &m.kind else {
            let t = self.expr(s, m);
            self.error(diag::type_mismatch(
                m.span,
                "a `for` loop",
                "a map `@name` or a range `a..b`",
                &t,
            ));
            return Type::I64;
        };
        let full = format!("@{name}");
        if !keys.is_empty() {
            self.error(diag::for_over_element(m.span, &full));
            return Type::I64;
        }
        let index = self.map_index.get(&full).copied();
        let info = match index {
            Some(i) => Some(self.maps[i].clone()),
            None => self.known_index.get(&full).map(|&i| self.known[i].clone()),
        };
        let Some(info) = info else {
            self.error(diag::map_never_assigned(m.span, &full));
            return Type::I64;
        };
        if let Some(i) = index {
            s.probe.maps.insert(m.id, i);
        }
        let Some(key) = info.key else {
            self.error(diag::for_over_scalar_map(
                m.span,
                &full,
                info.first_assigned,
            ));
            return Type::I64;
        };
        let value = match info.value {
            // Each element's value merged over every CPU, as a read of it is.
            Type::Agg(a) => match a.read_signedness() {
                Some(signed) => {
                    self.range_iter(s, m.span, diag::IterUse::AggregationRead);
                    Type::Int { size: 8, signed }
                }
                None => {
                    self.error(diag::aggregation_read(m.span, &full, a.name()));
                    Type::I64
                }
            },
            v => v,
        };
        s.probe.types.insert(m.id, value.clone());
        Type::Tuple(vec![key, value])
    }

    pub(super) fn assign(&mut self, s: &mut Scope, target: &Expr, op: AssignOp, value: &Expr) {
        match (&target.kind, op) {
            (ExprKind::Map { name, keys }, AssignOp::Assign) => {
                let value_ty = match self.map_aggregation(s, value) {
                    Some(Some(t)) => t,
                    // The rule said why.
                    Some(None) => return,
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
                self.note_division(s, target.id, bop, value, target.span.to(value.span));
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
                let stored = var_storage(&t);
                let key = self.var_for_assignment(s, target.id, name, target.span);
                // The variable's type over the whole body's values that are
                // not literals, as the previous round found it: a value of
                // the other sign that it cannot hold is converted, which
                // bpftrace warns of.
                if sign_is_certain(value) && t.is_int() {
                    if let Some(whole) = s.known_vars.typed_by_values.get(&key)
                        && !int_fits_into(&t, whole)
                    {
                        let whole = whole.clone();
                        self.error(diag::implicit_sign_cast(value.span, &t, &whole));
                    }
                    let seen = match s.typed_by_values.get(&key) {
                        Some(before) => before.unify(&t).unwrap_or_else(|| t.clone()),
                        None => t.clone(),
                    };
                    s.typed_by_values.insert(key.clone(), seen);
                }
                self.define_var(s, &key, name, stored, value.span);
                let t = self.var_type(s, &key);
                s.probe.types.insert(target.id, t);
            }
            (ExprKind::Var(name), AssignOp::Compound(bop)) => {
                let vt = self.expr(s, value);
                self.expect_int(
                    value,
                    &vt,
                    &format!("`{}`", AssignOp::Compound(bop).as_str()),
                );
                self.note_division(s, target.id, bop, value, target.span.to(value.span));
                if let Some(key) = self.var_in_scope(s, target.id, name, target.span) {
                    let t = self.var_type(s, &key);
                    if !matches!(t, Type::Void) {
                        self.expect_int(
                            target,
                            &t,
                            &format!("`{}`", AssignOp::Compound(bop).as_str()),
                        );
                        if matches!(bop, BinaryOp::Add | BinaryOp::Sub) {
                            self.scale_update(s, target, &t);
                        }
                    }
                    s.probe.types.insert(target.id, t);
                }
            }
            _ => {
                self.expr(s, value);
                self.error(diag::not_assignable(target.span));
            }
        }
    }
}

/// How a variable keeps a value of type `t`: a pointer with its C type, so
/// `$sk->member` works after `$sk = (struct sock *)arg0`, an integer with its
/// width, so `bswap($dport)` swaps a `__be16` (as in bpftrace), anything else
/// as stored.
pub(super) fn var_storage(t: &Type) -> Type {
    match t {
        Type::Pointer { .. } | Type::Int { .. } => t.clone(),
        _ => t.stored(),
    }
}

/// Whether a value of type `value` may be assigned to a variable declared
/// as `declared` (an integer of any width to an integer, converted; a
/// shorter string or tuple to a longer one).
pub(super) fn assignable(declared: &Type, value: &Type) -> bool {
    match (declared, value) {
        (Type::Int { .. }, Type::Int { .. }) => true,
        (Type::Pointer { .. }, Type::Pointer { .. } | Type::Int { .. }) => true,
        (d, v) => d.unify(&v.stored()).as_ref() == Some(d),
    }
}

/// Whether a statement ends its probe: `exit()` (which returns at once, as
/// bpftrace's does) or `return`.
fn ends_probe(stmt: &Stmt) -> bool {
    match &stmt.kind {
        StmtKind::Return(_) => true,
        StmtKind::Expr(e) | StmtKind::Discard(e) => {
            matches!(&e.kind, ExprKind::Call { name, .. } if name == "exit")
        }
        _ => false,
    }
}

/// Whether `e` is an aggregation call, or a block whose value is one.
pub(super) fn aggregates(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { name, .. } => {
            crate::builtins::function_def(name).is_some_and(|def| def.aggregates)
        }
        ExprKind::Block(b) => b.tail.as_ref().is_some_and(|t| aggregates(t)),
        _ => false,
    }
}

/// The value of an `if` condition made of integer literals (positional
/// parameters are literals by now), if it is one: `1 < 2`, `!0`, `$1 > 2`.
fn literal_condition(e: &Expr) -> Option<bool> {
    literal_value(e).map(|v| v != 0)
}

/// An integer expression of literals, evaluated as 64-bit signed C does;
/// `None` when anything in it is not a literal, or it divides by zero.
fn literal_value(e: &Expr) -> Option<i64> {
    use syntax::ast::UnaryOp;
    Some(match &e.kind {
        ExprKind::Int { value, .. } => *value as i64,
        ExprKind::Bool(b) => i64::from(*b),
        ExprKind::Unary { op, expr } => {
            let v = literal_value(expr)?;
            match op {
                UnaryOp::Not => i64::from(v == 0),
                UnaryOp::BitNot => !v,
                UnaryOp::Neg => v.wrapping_neg(),
                UnaryOp::Deref | UnaryOp::AddrOf => return None,
            }
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (literal_value(lhs)?, literal_value(rhs)?);
            match op {
                BinaryOp::LogOr => i64::from(a != 0 || b != 0),
                BinaryOp::LogAnd => i64::from(a != 0 && b != 0),
                BinaryOp::BitOr => a | b,
                BinaryOp::BitXor => a ^ b,
                BinaryOp::BitAnd => a & b,
                BinaryOp::Eq => i64::from(a == b),
                BinaryOp::Ne => i64::from(a != b),
                BinaryOp::Lt => i64::from(a < b),
                BinaryOp::Le => i64::from(a <= b),
                BinaryOp::Gt => i64::from(a > b),
                BinaryOp::Ge => i64::from(a >= b),
                BinaryOp::Shl => a.wrapping_shl(b as u32),
                BinaryOp::Shr => a.wrapping_shr(b as u32),
                BinaryOp::Add => a.wrapping_add(b),
                BinaryOp::Sub => a.wrapping_sub(b),
                BinaryOp::Mul => a.wrapping_mul(b),
                BinaryOp::Div => a.checked_div(b)?,
                BinaryOp::Mod => a.checked_rem(b)?,
            }
        }
        _ => return None,
    })
}

/// Whether a statement `e;` of type `t` throws a value away, which
/// bpftrace's type checker warns of (`{ 1 }`, `has_key(@a, 1);`): not an
/// effect (`print()`, `@x++`), and not `delete()`, whose value says only
/// whether the key was there.
fn value_is_lost(e: &Expr, t: &Type) -> bool {
    match &e.kind {
        ExprKind::IncDec { .. } => false,
        ExprKind::Call { name, .. } if name == "delete" => false,
        _ => !matches!(t, Type::Void | Type::Agg(_)),
    }
}

/// Whether the sign of `e`'s type says what its values are: not for a
/// literal (`5`, `-5` convert to any integer type silently), nor for
/// arithmetic with one or a choice of one (`$len - 1`, `$x > 0 ? $x : 0`),
/// whose sign weft takes from the literal where bpftrace keeps the other
/// side's.
fn sign_is_certain(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int { .. } => false,
        ExprKind::Unary {
            op: syntax::ast::UnaryOp::Neg,
            expr,
        } => sign_is_certain(expr),
        ExprKind::Binary { lhs, rhs, .. } => sign_is_certain(lhs) && sign_is_certain(rhs),
        ExprKind::Ternary { then, else_, .. } => {
            then.as_deref().is_none_or(sign_is_certain) && sign_is_certain(else_)
        }
        _ => true,
    }
}

/// Whether integer type `from` converts to `to` keeping every value, as
/// bpftrace decides it (`uint32` into `int64` does, `int64` into `uint64`
/// or `uint64` into `int64` does not); true for anything but two integers.
fn int_fits_into(from: &Type, to: &Type) -> bool {
    match (from, to) {
        (
            Type::Int {
                size: a,
                signed: sa,
            },
            Type::Int {
                size: b,
                signed: sb,
            },
        ) => match (sa, sb) {
            (x, y) if x == y => a <= b,
            (false, true) => a < b,
            _ => false,
        },
        _ => true,
    }
}
