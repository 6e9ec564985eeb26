//! Stage times on the running kernel: a stage that fires before the stage
//! written above it keeps its own time, and text, JSON and the timeline
//! place every stage at the same offset from the instance's start.

mod common;

use common::{scratch, stream_records, trace_workload};
use serde_json::Value;

/// `resolved` is written before `connect`, but the workload makes the
/// openat (connect) before the getppid (resolved), as glibc's own connect
/// to nscd comes before getaddrinfo returns.
fn script() -> &'static str {
    r#"stream gai {
    begin tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ by tid
    stage resolved tracepoint:syscalls:sys_enter_getppid by tid
    stage connect tracepoint:syscalls:sys_enter_openat by tid
    end tracepoint:syscalls:sys_enter_write by tid
}"#
}

const STAGES: [&str; 4] = [
    "sys_enter_nanosleep",
    "resolved",
    "connect",
    "sys_enter_write",
];

fn steps(path: &str) -> String {
    format!("nanosleep 1000 1 openat {path} 1 getppid 1 write 1 1")
}

/// Each stage's offset from the instance's start, in ns, from the timeline:
/// the instance slice and the nested intervals between stages.
fn timeline_offsets(path: &std::path::Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).expect("timeline written");
    let _ = std::fs::remove_file(path);
    let v: Value = serde_json::from_str(&text).expect("timeline is JSON");
    let events = v["traceEvents"].as_array().unwrap();
    let ns = |e: &Value, key: &str| (e[key].as_f64().unwrap() * 1000.0).round() as u64;
    let instances: Vec<&Value> = events.iter().filter(|e| e["name"] == "gai").collect();
    assert_eq!(instances.len(), 1, "{text}");
    assert_eq!(instances[0]["args"]["out_of_order"], true, "{text}");
    let start = ns(instances[0], "ts");
    let mut offsets = vec![None; STAGES.len()];
    offsets[0] = Some(0);
    for e in events.iter().filter(|e| e["cat"] == "stage") {
        let name = e["name"].as_str().unwrap();
        let (from, to) = name.split_once(" → ").expect("an interval");
        let at = |s: &str| STAGES.iter().position(|n| *n == s).unwrap();
        let (ts, dur) = (ns(e, "ts"), ns(e, "dur"));
        offsets[at(from)].get_or_insert(ts - start);
        offsets[at(to)] = Some(ts + dur - start);
    }
    offsets
        .into_iter()
        .map(|o| o.expect("every stage drawn"))
        .collect()
}

/// A duration as text prints it (`812ns`, `15.234us`, `2.001ms`, `1.500s`), in ns.
fn parse_duration(s: &str) -> f64 {
    for (unit, scale) in [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)] {
        if let Some(n) = s.strip_suffix(unit) {
            return n.parse::<f64>().unwrap() * scale;
        }
    }
    panic!("not a duration: {s}")
}

#[test]
fn a_stage_before_its_predecessor_has_one_offset_in_text_json_and_timeline() {
    require_root!();
    let file = scratch("gai-open");
    let f = file.display().to_string();

    // JSON and the timeline of one run.
    let timeline = scratch("gai-json.timeline");
    let t = timeline.display().to_string();
    let out = trace_workload(script(), &steps(&f), &["-f", "json", "--timeline", &t]);
    let records: Vec<Value> = stream_records(&out.stdout);
    assert_eq!(records.len(), 1, "{}\n{}", out.stdout, out.stderr);
    let r = &records[0];
    assert_eq!(r["in_order"], false, "{r}");
    let stages = r["stages"].as_array().unwrap();
    let json_offsets: Vec<u64> = stages
        .iter()
        .map(|s| s["offset_ns"].as_u64().unwrap())
        .collect();
    // connect fired before resolved: a negative step, kept, not clamped.
    assert!(json_offsets[2] < json_offsets[1], "{r}");
    assert!(stages[2]["delta_ns"].as_i64().unwrap() < 0, "{r}");
    let start = r["start_ns"].as_u64().unwrap();
    for s in stages {
        let ts = s["ts_ns"].as_u64().unwrap();
        assert_eq!(s["offset_ns"].as_u64().unwrap(), ts - start, "{r}");
    }
    assert_eq!(json_offsets[3], r["duration_ns"].as_u64().unwrap(), "{r}");
    assert_eq!(timeline_offsets(&timeline), json_offsets, "{r}");

    // Text and the timeline of another run: the steps add up to the offsets.
    let timeline = scratch("gai-text.timeline");
    let t = timeline.display().to_string();
    let out = trace_workload(script(), &steps(&f), &["--timeline", &t]);
    let _ = std::fs::remove_file(&file);
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with("gai "))
        .unwrap_or_else(|| panic!("no record: {}\n{}", out.stdout, out.stderr));
    assert!(line.contains(" out-of-order ["), "{line}");
    let inner = &line[line.find('[').unwrap() + 1..line.find(']').unwrap()];
    let mut offset = 0.0;
    let mut text_offsets = Vec::new();
    for (part, name) in inner.split(" > ").zip(STAGES) {
        let mut words = part.split(' ');
        assert_eq!(words.next(), Some(name), "{line}");
        let step = words.next().unwrap();
        offset += match step {
            "+0" => 0.0,
            s if s.starts_with('-') => -parse_duration(&s[1..]),
            s => parse_duration(s.trim_start_matches('+')),
        };
        text_offsets.push(offset);
    }
    let dur = parse_duration(
        line.split(" dur=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap(),
    );
    let drawn = timeline_offsets(&timeline);
    // Text shows 4 significant digits, truncated: each step may be short by
    // 1 in its last digit.
    for (text, drawn) in text_offsets.iter().zip(&drawn) {
        let slack = (*drawn as f64 * 0.002).max(3.0);
        assert!(
            (text - *drawn as f64).abs() <= slack,
            "{line}: {text_offsets:?} vs {drawn:?}"
        );
    }
    assert!(
        (dur - drawn[3] as f64).abs() <= (drawn[3] as f64 * 0.001).max(1.0),
        "{line}"
    );
    assert!(text_offsets[2] < text_offsets[1], "{line}");
}
