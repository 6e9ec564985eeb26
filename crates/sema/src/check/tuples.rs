//! `$t[N]`: a tuple's field by index, bpftrace's array-style tuple access.
//! The index is a constant: a literal, or arithmetic on literals
//! (`$t[1 + 1]`), folded here as bpftrace folds it. The lowering reads the
//! field as it reads `$t.N` (`TypedProbe::record_fields`).

use syntax::ast::{BinaryOp, Expr, ExprKind, UnaryOp};

use super::{Checker, Scope};
use crate::diagnostics as diag;
use crate::types::Type;

impl Checker<'_> {
    /// The type of `e`, `base[index]` where `base` is a tuple of `fields`.
    pub(super) fn tuple_index(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        index: &Expr,
        fields: &[Type],
    ) -> Type {
        let Some(n) = constant_int(index) else {
            self.error(diag::needs_literal(index.span, "a tuple index"));
            return Type::I64;
        };
        match usize::try_from(n).ok().filter(|&i| i < fields.len()) {
            Some(i) => {
                s.probe.record_fields.insert(e.id, i as u32);
                fields[i].clone()
            }
            None => {
                self.error(diag::tuple_index_out_of_range(index.span, n, fields.len()));
                Type::I64
            }
        }
    }
}

/// The value of an integer expression made of literals, if it is one.
pub(crate) fn constant_int(e: &Expr) -> Option<i64> {
    use BinaryOp::*;
    match &e.kind {
        ExprKind::Int { value, .. } => i64::try_from(*value).ok(),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            expr,
        } => constant_int(expr)?.checked_neg(),
        ExprKind::Binary { op, lhs, rhs } => {
            let (l, r) = (constant_int(lhs)?, constant_int(rhs)?);
            match op {
                Add => l.checked_add(r),
                Sub => l.checked_sub(r),
                Mul => l.checked_mul(r),
                Div => l.checked_div(r),
                Mod => l.checked_rem(r),
                Shl => l.checked_shl(u32::try_from(r).ok()?),
                Shr => l.checked_shr(u32::try_from(r).ok()?),
                BitAnd => Some(l & r),
                BitOr => Some(l | r),
                BitXor => Some(l ^ r),
                _ => None,
            }
        }
        _ => None,
    }
}
