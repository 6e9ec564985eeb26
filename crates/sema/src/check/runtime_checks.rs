//! Checks made while the program runs, each a warning as bpftrace's
//! current release prints it, with the script's line and `~` under the
//! place (`abi::PrintfAction::RuntimeWarning`); the lowering tests the
//! condition and sends the warning's printf site, kept by node in
//! `TypedProbe::runtime_warnings`:
//!
//! - division and modulo by zero: the result is 1 (`stdin:1:31-60: WARNING:
//!   Divide or modulo by 0 detected. ...`); BPF itself would give 0 for
//!   `x / 0` and `x` for `x % 0`. Each `/`, `%`, `/=` and `%=` whose
//!   divisor is not a non-zero literal is checked.
//! - an array index past the end of its array (`$a.x[$i]`, the index not a
//!   literal): the warning, then the element is read anyway, as bpftrace
//!   reads it.

use abi::PrintfAction;
use source::Span;
use syntax::ast::{BinaryOp, Expr, ExprKind, NodeId};

use super::{Checker, Scope};
use crate::typed::PrintfSite;

/// bpftrace's words for a division by zero.
pub const DIVIDE_BY_ZERO: &str = "Divide or modulo by 0 detected. This can lead to unexpected results. 1 is being used as the result.";

/// bpftrace's words for an index past the end of an array.
pub const ARRAY_ACCESS_OUT_OF_BOUNDS: &str =
    "Array access out of bounds. This can lead to unexpected results.";

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
        self.runtime_warning(s, node, DIVIDE_BY_ZERO, span);
    }

    /// Records the warning site of `array[index]` (node `e`) when the index
    /// is not a literal (a literal was checked against the length already).
    pub(super) fn note_array_index(&mut self, s: &mut Scope, e: &Expr, index: &Expr, len: u32) {
        if len == 0 || matches!(index.kind, ExprKind::Int { .. }) {
            return;
        }
        self.runtime_warning(s, e.id, ARRAY_ACCESS_OUT_OF_BOUNDS, e.span);
    }

    fn runtime_warning(&mut self, s: &mut Scope, node: NodeId, text: &str, span: Span) {
        self.printfs.push(PrintfSite {
            format: abi::printf::Format::parse(&text.replace('%', "%%")),
            args: Vec::new(),
            action: PrintfAction::RuntimeWarning,
            span,
        });
        s.probe
            .runtime_warnings
            .insert(node, self.printfs.len() - 1);
    }
}
