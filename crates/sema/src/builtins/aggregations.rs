//! Aggregations: `count()`, `sum(n)`, `avg(n)`, `min(n)`, `max(n)`,
//! `stats(n)`, `hist(n[, bits])` and `lhist(n, min, max, step)`.
//!
//! What they do: fold a value into a map element, per CPU, as bpftrace
//! does; user space merges the CPUs and prints them as bpftrace prints
//! them (`hist` as power-of-two buckets, `lhist` as linear ones, `stats` as
//! count, average and total). `sum`, `min`, `max`, `avg` and `stats` keep
//! the sign of their argument's type.
//!
//! Why they are limited: an aggregation is only the whole value of a map
//! assignment (`@bytes[comm] = sum(args->count)`), never read back as a
//! value; `lhist`'s bounds and `hist`'s bits (0 to 5: each power of two
//! split in `2^bits` buckets) are literals.
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
pub const HIST: FunctionDef = def(
    "hist",
    "hist(n[, bits])",
    "a power-of-two histogram of the values, each power split in 2^bits buckets",
);
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
        "hist" => Aggregation::Hist { bits: 0 },
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
    let hist_bits = matches!(agg, Aggregation::Hist { .. }) && args.len() == 2;
    if args.len() != expected && !hist_bits {
        let what = match expected {
            0 => "no arguments".to_string(),
            1 if name == "hist" => "one or two arguments".to_string(),
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
        Aggregation::Hist { .. } => match args.get(1) {
            None => Aggregation::Hist { bits: 0 },
            Some(bits) => match hist_bits_of(cx, bits) {
                Some(bits) => Aggregation::Hist { bits },
                None => return Type::Void,
            },
        },
        Aggregation::Lhist { .. } => match lhist_bounds(cx, args) {
            Some(lhist) => lhist,
            None => return Type::Void,
        },
        // tseries() has its own rule (`super::tseries`).
        Aggregation::Tseries { .. } => return Type::Void,
    })
}

/// `hist()`'s literal bits, 0 to 5.
fn hist_bits_of(cx: &mut CallCheck<'_, '_>, arg: &Expr) -> Option<u8> {
    let ExprKind::Int { value, .. } = arg.kind else {
        cx.needs_literal(arg.span, "hist()'s bits");
        return None;
    };
    if value > u64::from(abi::HIST_MAX_BITS) {
        cx.error(diag::bad_hist_bits(arg.span, value));
        return None;
    }
    Some(value as u8)
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
