//! Kernel tests of `tseries()` and `hist(n, bits)` with their exact text
//! and JSON output. The graphs are drawn from a BEGIN probe (it runs once)
//! whose clock is the `@ts` map (`BPFTRACE_DUMMY_TS_MAP`), so the intervals
//! and their clock times are known; the real clock (TAI) is checked on the
//! workload's calls.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{run, trace_workload, weft};

/// Runs a BEGIN-only script with `@ts` as the time series' clock, in UTC.
fn with_dummy_clock(script: &str, extra: &[&str]) -> common::Outcome {
    let out = run(
        Command::new(weft())
            .args(["-q", "-e", script])
            .args(extra)
            .env("BPFTRACE_DUMMY_TS_MAP", "@ts")
            .env("TZ", "UTC"),
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    out
}

/// 100 values `$i % 10` written every 10 ms from time 0: each 100 ms
/// interval ends with 9, 0..9 were written in each, their average is 4.
fn ramp(agg: &str) -> String {
    format!(
        "config = {{ unstable_tseries = enable }} BEGIN {{ @ts = (uint64)0; $i = (uint64)0; while ($i < 100) {{ @a = tseries($i % 10, 100ms, 5{agg}); @ts += 10000000; $i++; }} delete(@ts); }}"
    )
}

fn flat_graph(low: i64, value: i64, high: i64) -> String {
    let mut rows = String::new();
    for tenth in 5..10 {
        rows.push_str(&format!(
            "00:00:00.{tenth}00 |{:>26}{:>26} {value}\n",
            if value == low + 1 { "*" } else { "" },
            "|"
        ));
    }
    // Maps printed at exit come after bpftrace's two newlines.
    format!(
        "\n\n@a:\n             {low:<21}{high:>32}\nhh:mm:ss.ms  |{}|\n{rows}             v{}v\n             {low:<21}{high:>32}\n\n",
        "_".repeat(51),
        "_".repeat(51)
    )
}

#[test]
fn last_value_avg_and_sum_per_interval_as_text_and_json() {
    require_root!();
    let out = with_dummy_clock(&ramp(""), &[]);
    assert_eq!(out.stdout, flat_graph(8, 9, 10), "{}", out.stderr);
    let out = with_dummy_clock(&ramp(", \"avg\""), &[]);
    assert_eq!(out.stdout, flat_graph(3, 4, 5), "{}", out.stderr);
    let out = with_dummy_clock(&ramp(", \"min\""), &["-f", "json"]);
    let rows: Vec<String> = (5..10)
        .map(|t| format!(r#"{{"interval_start":"1970-01-01 00:00:00.{t}00000000","value":0}}"#))
        .collect();
    assert_eq!(
        out.stdout,
        format!(
            "{{\"type\": \"tseries\", \"data\": {{\"@a\": [{}]}}}}\n",
            rows.join(",")
        ),
        "{}",
        out.stderr
    );
    let out = with_dummy_clock(&ramp(", \"sum\""), &["-f", "json"]);
    assert!(out.stdout.contains(r#""value":45}]"#), "{}", out.stdout);
}

/// A zigzag from -3 to 3 and back, one value per second: the zero line is
/// drawn, the points spread over the width, the clock shows whole seconds.
#[test]
fn signed_values_draw_the_zero_line() {
    require_root!();
    let script = "config = { unstable_tseries = enable } BEGIN { @ts = (uint64)1000000000; $v = -3; $i = 0; while ($i < 7) { @z = tseries($v, 1s, 8); @ts += 1000000000; $v = $i < 3 ? $v + 3 : $v - 3; $i++; } delete(@ts); }";
    let out = with_dummy_clock(script, &[]);
    let line = |at: usize, dot: bool| {
        let mut l = vec![b' '; 53];
        l[0] = b'|';
        l[52] = b'|';
        if dot {
            // 53 * 3 / 9 columns from the left: where 0 is between -3 and 6.
            l[17] = b'.';
        }
        l[at] = b'*';
        String::from_utf8(l).unwrap()
    };
    let want = format!(
        "\n\n@z:\n         {:<21}{:>32}\nhh:mm:ss |{}|\n00:00:01 {} -3\n00:00:02 {} 0\n00:00:03 {} 3\n00:00:04 {} 6\n00:00:05 {} 3\n00:00:06 {} 0\n00:00:07 {} -3\n         v{}v\n         {:<21}{:>32}\n\n",
        -3,
        6,
        "_".repeat(51),
        line(0, true),
        line(17, true),
        line(34, true),
        line(52, true),
        line(34, true),
        line(17, true),
        line(0, true),
        "_".repeat(51),
        -3,
        6
    );
    assert_eq!(out.stdout, want, "{}", out.stderr);
}

/// Keys sort by their latest interval; a key shows the intervals from its
/// first value to the map's latest, `-` where it has none.
#[test]
fn keys_share_the_latest_intervals() {
    require_root!();
    let script = r#"config = { unstable_tseries = enable } BEGIN { @ts = (uint64)1000000; @a["late"] = tseries(7, 1ms, 3); @ts += 1000000; @a["early"] = tseries(2, 1ms, 3); @ts += 1000000; @a["late"] = tseries(8, 1ms, 3); delete(@ts); }"#;
    let out = with_dummy_clock(script, &["-f", "json"]);
    assert_eq!(
        out.stdout,
        concat!(
            r#"{"type": "tseries", "data": {"@a": {"early": [{"interval_start":"1970-01-01 00:00:00.002000000","value":2}], "#,
            r#""late": [{"interval_start":"1970-01-01 00:00:00.001000000","value":7},{"interval_start":"1970-01-01 00:00:00.003000000","value":8}]}}}"#,
            "\n"
        ),
        "{}",
        out.stderr
    );
    let out = with_dummy_clock(script, &[]);
    assert!(out.stdout.starts_with("\n\n@a[early]:\n"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("00:00:00.003 |                                                   | -\n"),
        "{}",
        out.stdout
    );
}

/// On the real clock: the workload's 5 calls are summed into 1 s intervals
/// that start on whole seconds of today's date.
#[test]
fn the_clock_is_wall_time() {
    require_root!();
    let script = r#"config = { unstable_tseries = enable } tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @calls = tseries(1, 1s, 600, "sum"); }"#;
    let out = trace_workload(script, "getppid 5", &["-f", "json"]);
    let line = out.stdout.trim();
    assert!(line.starts_with(r#"{"type": "tseries""#), "{line}");
    let values: u64 = line
        .split(r#""value":"#)
        .skip(1)
        .map(|v| v.split('}').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(values, 5, "{line}");
    // Each start is a whole second of today's UTC date (TAI may run a
    // little ahead of UTC: dates two minutes around now are accepted).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let dates: Vec<String> = [now - 120, now + 120]
        .iter()
        .map(|secs| {
            let out = run(
                Command::new("date").args(["-u", "-d", &format!("@{secs}"), "+%F"]),
                Duration::from_secs(10),
            );
            out.stdout.trim().to_string()
        })
        .collect();
    let starts: Vec<&str> = line.split(r#""interval_start":""#).skip(1).collect();
    assert!(!starts.is_empty(), "{line}");
    for start in starts {
        let start = &start[..29];
        assert!(start.ends_with(".000000000"), "{start}");
        assert!(
            dates.iter().any(|d| start.starts_with(d.as_str())),
            "{start} not in {dates:?}"
        );
    }
}

/// `hist(n, bits)`: each power of two split in 2^bits buckets.
#[test]
fn hist_bits_split_each_power_of_two() {
    require_root!();
    let out = with_dummy_clock(
        "BEGIN { @ts = (uint64)0; $i = 0; while ($i < 40) { @ = hist($i, 2); $i++; } delete(@ts); }",
        &[],
    );
    let mut want = String::from("\n\n@:\n");
    let bar = |n: usize| format!("|{:<52}|\n", "@".repeat(n));
    for v in 0..8 {
        want.push_str(&format!("{:<16}{:>8} {}", format!("[{v}]"), 1, bar(6)));
    }
    for (lo, hi, n, w) in [
        (8, 10, 2, 13),
        (10, 12, 2, 13),
        (12, 14, 2, 13),
        (14, 16, 2, 13),
        (16, 20, 4, 26),
        (20, 24, 4, 26),
        (24, 28, 4, 26),
        (28, 32, 4, 26),
        (32, 40, 8, 52),
    ] {
        want.push_str(&format!("{:<16}{n:>8} {}", format!("[{lo}, {hi})"), bar(w)));
    }
    want.push('\n');
    assert_eq!(out.stdout, want, "{}", out.stderr);
}
