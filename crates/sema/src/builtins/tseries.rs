//! `tseries(n, interval, intervals[, agg])`: a time series, bpftrace's
//! unstable aggregation (`unstable_tseries`: `warn` by default, as bpftrace).
//!
//! What it does: the time (the kernel's TAI clock) divided by `interval`
//! nanoseconds is the current epoch; the value `n` goes into that epoch's
//! interval, one of the last `intervals` kept per map key. Within an
//! interval the last value written wins, or `agg` folds them: `"avg"`,
//! `"min"`, `"max"` or `"sum"`. User space merges the CPUs and prints each
//! key's intervals as a graph (text) or a list of `interval_start`/`value`
//! (JSON), as bpftrace's current release does.
//!
//! Why it is limited: one key's intervals are one per-CPU map value, so at
//! most `abi::TSERIES_MAX_INTERVALS` (1365) of them, where bpftrace allows
//! 1,000,000 (it keeps each interval under its own key).
//!
//! Testing: with `BPFTRACE_DUMMY_TS_MAP=@name` in the environment (the hook
//! bpftrace's own tests use) the time is read from that scalar map instead
//! of the clock, so a script sets the clock itself (see
//! `CheckOptions::dummy_clock_map`).
//!
//! Lowering: `codegen::lower::builtins::tseries`.

use abi::{Aggregation, TSERIES_MAX_INTERVALS, TseriesAgg};
use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "tseries",
    signature: "tseries(n, interval, intervals[, \"avg\" | \"min\" | \"max\" | \"sum\"])",
    help: "a time series: the value of each of the last `intervals` intervals",
    check,
    aggregates: true,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let args = cx.args;
    let arg_types = cx.check_all();
    match cx.config().unstable("tseries").as_str() {
        "error" => cx.error(diag::unstable_feature_disabled(cx.call.span, "tseries")),
        "warn" => cx.report_once(diag::unstable_feature_used("tseries")),
        _ => {}
    }
    if !cx.assigned_to_map {
        cx.error(diag::aggregation_not_assigned(cx.call.span, "tseries"));
        return Type::I64;
    }
    if !(3..=4).contains(&args.len()) {
        cx.wrong_arg_count("three or four arguments");
        return Type::Void;
    }
    if !cx.expect_int(&args[0], &arg_types[0], "tseries()") {
        return Type::Void;
    }
    let Some(interval_ns) = literal(cx, &args[1], "tseries()'s interval") else {
        return Type::Void;
    };
    if interval_ns == 0 {
        let d = diag::bad_tseries_arg(
            args[1].span,
            "tseries() interval_ns must be >= 1 (0 provided)".into(),
            "the interval is a duration: `100ms`, `1s`, or nanoseconds",
        );
        cx.error(d);
        return Type::Void;
    }
    let Some(intervals) = literal(cx, &args[2], "tseries()'s number of intervals") else {
        return Type::Void;
    };
    if intervals == 0 || intervals > u64::from(TSERIES_MAX_INTERVALS) {
        let problem = if intervals == 0 {
            "tseries() num_intervals must be >= 1 (0 provided)".to_string()
        } else {
            format!("tseries() num_intervals must be <= {TSERIES_MAX_INTERVALS} in weft ({intervals} provided)")
        };
        let help = if intervals == 0 {
            "the series keeps this many of the latest intervals".to_string()
        } else {
            format!(
                "weft keeps a key's intervals in one per-CPU map value, which holds at most {TSERIES_MAX_INTERVALS}; use a longer interval"
            )
        };
        cx.error(diag::bad_tseries_arg(args[2].span, problem, &help));
        return Type::Void;
    }
    let agg = match args.get(3) {
        None => TseriesAgg::Last,
        Some(arg) => {
            let ExprKind::Str(name) = &arg.kind else {
                cx.needs_literal(arg.span, "tseries()'s aggregation");
                return Type::Void;
            };
            let name = String::from_utf8_lossy(name);
            match TseriesAgg::from_name(&name) {
                Some(agg) => agg,
                None => {
                    let problem = format!(
                        "tseries() expects one of the following aggregation functions: {} (\"{name}\" provided)",
                        TseriesAgg::NAMES.join(", ")
                    );
                    let help = "without one, each interval keeps the last value written";
                    cx.error(diag::bad_tseries_arg(arg.span, problem, help));
                    return Type::Void;
                }
            }
        }
    };
    Type::Agg(Aggregation::Tseries {
        interval_ns,
        intervals: intervals as u32,
        agg,
        signed: arg_types[0].is_signed(),
    })
}

/// An integer argument that must be written as a literal (durations are).
fn literal(cx: &mut CallCheck<'_, '_>, arg: &Expr, what: &str) -> Option<u64> {
    match arg.kind {
        ExprKind::Int { value, .. } => Some(value),
        _ => {
            cx.needs_literal(arg.span, what);
            None
        }
    }
}

/// The map `BPFTRACE_DUMMY_TS_MAP` names (in `env`), which must be a
/// keyless map of integers: its index, or `None` (reported in
/// `diags` when the variable is set but names no such map).
pub(crate) fn dummy_clock(
    typed: &crate::TypedProgram,
    env: &[(String, String)],
    diags: &mut source::Diagnostics,
) -> Option<usize> {
    let (_, name) = env.iter().find(|(k, _)| k == "BPFTRACE_DUMMY_TS_MAP")?;
    let Some(index) = typed.map_index(name) else {
        diags.push(diag::bad_dummy_clock_map(name, "is not in the script"));
        return None;
    };
    let map = &typed.maps[index];
    if map.key.is_some() {
        diags.push(diag::bad_dummy_clock_map(name, "must be scalar"));
        return None;
    }
    // bpftrace wants it unsigned; weft's arithmetic may have made it signed
    // (`@ts += 100 * $ms`), and the bits are the same.
    if !matches!(map.value, Type::Int { .. }) {
        diags.push(diag::bad_dummy_clock_map(name, "value must be an integer"));
        return None;
    }
    Some(index)
}
