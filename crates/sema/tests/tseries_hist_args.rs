//! The argument checks of `tseries()` and `hist(n, bits)`, and the
//! `BPFTRACE_DUMMY_TS_MAP` test clock: accepted programs show their types
//! (and any warning); rejected ones their rendered diagnostics.

use ktypes::FixtureKernel;
use sema::{CheckOptions, check, print_types};
use source::{SourceMap, render_all};

fn run_with(src: &str, env: &[(&str, &str)]) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) = syntax::parse(map.file(id));
    let opts = CheckOptions {
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..CheckOptions::default()
    };
    let (typed, sema_diags) = check(&program, &FixtureKernel::typical(), &opts);
    diags.extend(sema_diags.iter().cloned());
    let mut out = render_all(diags.iter(), &map);
    if !diags.has_errors() {
        out.push_str(&print_types(&typed));
        out.push_str(&format!("dummy clock: {:?}\n", typed.dummy_clock));
    }
    out
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        case!($name, $src, &[]);
    };
    ($name:ident, $src:expr, $env:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), run_with($src, $env), $src);
        }
    };
}

case!(
    ok_hist_bits,
    "BEGIN { @h = hist(7, 3); @g[1] = hist(9, 0); }"
);
case!(err_hist_bits_too_many, "BEGIN { @h = hist(7, 6); }");
case!(
    err_hist_bits_not_literal,
    "BEGIN { $b = 2; @h = hist(7, $b); }"
);
case!(
    err_hist_bits_differ,
    "BEGIN { @h = hist(7, 2); @h = hist(7, 3); }"
);
case!(err_hist_three_args, "BEGIN { @h = hist(7, 2, 1); }");
// The default `unstable_tseries = warn` warns once, without the script's line, as bpftrace.
case!(
    ok_tseries_warns_once,
    r#"BEGIN { @a = tseries(1, 100ms, 5); @b[comm] = tseries(-1, 1s, 10, "min"); }"#
);
case!(
    ok_tseries_enabled,
    r#"config = { unstable_tseries = enable } BEGIN { @a = tseries(1, 100ms, 5, "avg"); }"#
);
case!(
    err_tseries_disabled,
    r#"config = { unstable_tseries = error } BEGIN { @a = tseries(1, 100ms, 5); }"#
);
case!(
    err_tseries_no_intervals,
    "config = { unstable_tseries = enable } BEGIN { @a = tseries(1, 100ms, 0); }"
);
case!(
    err_tseries_too_many_intervals,
    "config = { unstable_tseries = enable } BEGIN { @a = tseries(1, 100ms, 2000); }"
);
case!(
    err_tseries_zero_interval,
    "config = { unstable_tseries = enable } BEGIN { @a = tseries(1, 0, 5); }"
);
case!(
    err_tseries_unknown_agg,
    r#"config = { unstable_tseries = enable } BEGIN { @a = tseries(1, 1s, 5, "median"); }"#
);
case!(
    err_tseries_interval_not_literal,
    "config = { unstable_tseries = enable } BEGIN { $i = 5; @a = tseries(1, $i, 5); }"
);
case!(
    err_tseries_two_args,
    "config = { unstable_tseries = enable } BEGIN { @a = tseries(1, 1s); }"
);
case!(
    err_tseries_differs,
    "config = { unstable_tseries = enable } BEGIN { @a = tseries(1, 1s, 5); @a = tseries(1, 1s, 6); }"
);
case!(
    ok_dummy_clock,
    "config = { unstable_tseries = enable } BEGIN { @ts = (uint64)5; @a = tseries(1, 1s, 5); }",
    &[("BPFTRACE_DUMMY_TS_MAP", "@ts")]
);
case!(
    err_dummy_clock_missing,
    "config = { unstable_tseries = enable } BEGIN { @a = tseries(1, 1s, 5); }",
    &[("BPFTRACE_DUMMY_TS_MAP", "@ts")]
);
case!(
    err_dummy_clock_keyed,
    "config = { unstable_tseries = enable } BEGIN { @ts[1] = (uint64)5; @a = tseries(1, 1s, 5); }",
    &[("BPFTRACE_DUMMY_TS_MAP", "@ts")]
);
// `%gr` takes an integer (GFP flags).
case!(ok_printf_gr, r#"BEGIN { printf("%gr %s\n", 0xcc0, "x"); }"#);
case!(err_printf_gr_string, r#"BEGIN { printf("%gr\n", "x"); }"#);
