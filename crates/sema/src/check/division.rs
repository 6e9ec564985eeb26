//! Division and modulo by zero at run time, as bpftrace's current release
//! handles them: the result is 1 and a warning names the operation
//! (`stdin:1:31-60: WARNING: Divide or modulo by 0 detected. ...`). BPF
//! itself would give 0 for `x / 0` and `x` for `x % 0`. Each `/`, `%`, `/=`
//! and `%=` whose divisor is not a non-zero literal gets the printf site of
//! that warning (`TypedProbe::divisions`, by the operation's node); the
//! lowering tests the divisor before dividing.

use abi::PrintfAction;
use source::Span;
use syntax::ast::{BinaryOp, Expr, ExprKind, NodeId};

use super::{Checker, Scope};
use crate::typed::PrintfSite;

/// bpftrace's words for it.
pub const DIVIDE_BY_ZERO: &str = "Divide or modulo by 0 detected. This can lead to unexpected results. 1 is being used as the result.";

impl Checker<'_> {
    /// Records the warning site of the division `node` (spanning `span`)
    /// when `divisor` may be zero.
    pub(super) fn note_division(
        &mut self,
        s: &mut Scope,
        node: NodeId,
        op: BinaryOp,
        divisor: &Expr,
        span: Span,
    ) {
        if !matches!(op, BinaryOp::Div | BinaryOp::Mod) {
            return;
        }
        if matches!(divisor.kind, ExprKind::Int { value, .. } if value != 0) {
            return;
        }
        self.printfs.push(PrintfSite {
            format: abi::printf::Format::parse(&DIVIDE_BY_ZERO.replace('%', "%%")),
            args: Vec::new(),
            action: PrintfAction::RuntimeWarning,
            span,
        });
        s.probe.divisions.insert(node, self.printfs.len() - 1);
    }
}
