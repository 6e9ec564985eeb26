//! Aggregations: `count()`, `sum(n)`, `avg(n)`, `min(n)`, `max(n)`,
//! `stats(n)`, `hist(n)` and `lhist(n, min, max, step)`.
//!
//! What they do: fold a value into a map element, per CPU, as bpftrace
//! does; user space merges the CPUs and prints them as bpftrace prints
//! them (`hist` as power-of-two buckets, `lhist` as linear ones, `stats` as
//! count, average and total). `sum`, `min`, `max`, `avg` and `stats` keep
//! the sign of their argument's type.
//!
//! Why they are limited: an aggregation is only the whole value of a map
//! assignment (`@bytes[comm] = sum(args->count)`), never read back as a
//! value; `lhist`'s bounds are literals; `hist`'s bits argument is not
//! supported yet.
//!
//! Lowering: `codegen::lower::builtins::aggregations` (find or create the
//! element, fold the value in).

use abi::Aggregation;
use syntax::ast::{Expr, ExprKind, UnaryOp};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

/// One aggregation's definition: its rule is [`check`] for every one.
const fn def(name: &'static str, signature: &'static str, help: &'static str) -> FunctionDef {
    FunctionDef {
        name,
        signature,
        help,
        check,
        aggregates: true,
    }
}

pub const COUNT: FunctionDef = def("count", "count()", "how many times the probe fired");
pub const SUM: FunctionDef = def("sum", "sum(n)", "the sum of the values");
pub const AVG: FunctionDef = def("avg", "avg(n)", "the average of the values");
pub const MIN: FunctionDef = def("min", "min(n)", "the smallest value");
pub const MAX: FunctionDef = def("max", "max(n)", "the largest value");
pub const STATS: FunctionDef = def("stats", "stats(n)", "count, average and total of the values");
pub const HIST: FunctionDef = def("hist", "hist(n)", "a power-of-two histogram of the values");
pub const LHIST: FunctionDef = def(
    "lhist",
    "lhist(n, min, max, step)",
    "a linear histogram of the values from min to max in steps of step",
);

/// The aggregation `name` stands for, before its argument types are known.
fn nominal(name: &str) -> Aggregation {
    match name {
        "count" => Aggregation::Count,
        "sum" => Aggregation::Sum { signed: false },
        "avg" => Aggregation::Avg { signed: false },
        "min" => Aggregation::Min { signed: false },
        "max" => Aggregation::Max { signed: false },
        "stats" => Aggregation::Stats { signed: false },
        "hist" => Aggregation::Hist,
        _ => Aggregation::Lhist {
            min: 0,
            max: 0,
            step: 1,
        },
    }
}

/// `Type::Agg` when the call is the value of a map assignment and fits;
/// otherwise, after reporting why, `Type::Void` (nothing is stored).
fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let name = cx.name;
    let args = cx.args;
    let arg_types = cx.check_all();
    if !cx.assigned_to_map {
        cx.error(diag::aggregation_not_assigned(cx.call.span, name));
        return Type::I64;
    }
    let agg = nominal(name);
    let expected = match agg {
        Aggregation::Count => 0,
        Aggregation::Lhist { .. } => 4,
        _ => 1,
    };
    if args.len() != expected {
        if name == "hist" && args.len() == 2 {
            cx.not_supported_yet(args[1].span, "the bits argument of hist()");
            return Type::Void;
        }
        let what = match expected {
            0 => "no arguments".to_string(),
            1 => "one argument".to_string(),
            n => format!("{n} arguments"),
        };
        cx.wrong_arg_count(&what);
        return Type::Void;
    }
    if let (Some(a), Some(t)) = (args.first(), arg_types.first())
        && !cx.expect_int(a, t, &format!("{name}()"))
    {
        return Type::Void;
    }
    let signed = arg_types.first().is_some_and(Type::is_signed);
    Type::Agg(match agg {
        Aggregation::Count => Aggregation::Count,
        Aggregation::Sum { .. } => Aggregation::Sum { signed },
        Aggregation::Min { .. } => Aggregation::Min { signed },
        Aggregation::Max { .. } => Aggregation::Max { signed },
        Aggregation::Avg { .. } => Aggregation::Avg { signed },
        Aggregation::Stats { .. } => Aggregation::Stats { signed },
        Aggregation::Hist => Aggregation::Hist,
        Aggregation::Lhist { .. } => match lhist_bounds(cx, args) {
            Some(lhist) => lhist,
            None => return Type::Void,
        },
    })
}

/// `lhist`'s literal min, max and step, checked.
fn lhist_bounds(cx: &mut CallCheck<'_, '_>, args: &[Expr]) -> Option<Aggregation> {
    let lit = |e: &Expr| match e.kind {
        ExprKind::Int { value, .. } => Some(value as i64),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            ref expr,
        } => match expr.kind {
            ExprKind::Int { value, .. } => Some(-(value as i64)),
            _ => None,
        },
        _ => None,
    };
    let (Some(min), Some(max), Some(step)) = (lit(&args[1]), lit(&args[2]), lit(&args[3])) else {
        let bad = args[1..]
            .iter()
            .find(|a| lit(a).is_none())
            .map_or(cx.call.span, |a| a.span);
        cx.needs_literal(bad, "lhist()'s min, max and step");
        return None;
    };
    if step <= 0 || max <= min || (max - min) / step > 1000 {
        cx.error(diag::bad_lhist_range(args[1].span.to(args[3].span)));
        return None;
    }
    Some(Aggregation::Lhist { min, max, step })
}
