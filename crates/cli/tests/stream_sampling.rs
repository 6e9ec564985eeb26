//! `sample N` on a stream, and `rand` for ad-hoc sampling: one in N
//! instances is begun, chosen at random in the kernel before anything of it
//! is written; records and the exit report say the rate, and `args->sample`
//! scales a handler's aggregation.

mod common;

use common::trace_workload;

const SAMPLED: &str = r#"stream ppid {
    begin tracepoint:syscalls:sys_enter_getppid /pid == cpid/ by tid
    end tracepoint:syscalls:sys_exit_getppid by tid
    sample 10
}"#;

/// The count in `weft: stream ppid: sampled 1 in 10: B of S instances begun`.
fn begun_of_seen(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("weft: stream ppid: sampled 1 in 10: "))
        .unwrap_or_else(|| panic!("no sampling report:\n{stderr}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    // weft: stream ppid: sampled 1 in 10: B of S instances begun; ...
    (words[7].parse().unwrap(), words[9].parse().unwrap())
}

#[test]
fn sample_10_of_1000_instances_records_about_100() {
    require_root!();
    let out = trace_workload(SAMPLED, "getppid 1000", &[]);
    let records: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("ppid "))
        .collect();
    // Binomial(1000, 1/10): 100 on average, a standard deviation of 9.5.
    assert!(
        (70..=130).contains(&records.len()),
        "{} records",
        records.len()
    );
    for r in &records {
        assert!(r.contains(" sample=1/10 start="), "{r}");
    }
    let (begun, seen) = begun_of_seen(&out.stderr);
    assert_eq!(begun as usize, records.len(), "{}", out.stderr);
    assert_eq!(seen, 1000, "every instance is seen: {}", out.stderr);
    assert!(
        out.stderr
            .contains("each record stands for 10 (args->sample in a handler)"),
        "{}",
        out.stderr
    );
    // JSON says the rate too.
    let out = trace_workload(SAMPLED, "getppid 300", &["-f", "json"]);
    let samples: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "stream")
        .map(|v| v["data"]["sample"].clone())
        .collect();
    assert!(!samples.is_empty(), "{}", out.stdout);
    assert!(samples.iter().all(|s| *s == 10), "{samples:?}");
}

#[test]
fn a_handler_scales_its_aggregation_by_the_rate() {
    require_root!();
    let script =
        format!("{SAMPLED}\nstream:ppid {{ @records = count(); @scaled = sum(args->sample); }}");
    let out = trace_workload(&script, "getppid 1000", &[]);
    let value = |name: &str| -> u64 {
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("{name} missing:\n{}", out.stdout))
            .parse()
            .unwrap()
    };
    let records = value("@records");
    assert!((70..=130).contains(&records), "{records}");
    assert_eq!(value("@scaled"), records * 10);
    let (begun, seen) = begun_of_seen(&out.stderr);
    assert_eq!((begun, seen), (records, 1000));
}

#[test]
fn rand_samples_in_a_predicate() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid && rand % 10 == 0/ { @ = count(); }",
        "getppid 1000",
        &[],
    );
    let n: u64 = out
        .stdout
        .trim()
        .strip_prefix("@: ")
        .unwrap_or_else(|| panic!("{}", out.stdout))
        .parse()
        .unwrap();
    assert!((60..=140).contains(&n), "{n}");
}

#[test]
fn a_sample_rate_is_a_positive_count() {
    for rate in ["0", "x", "1.5", "4294967296"] {
        let script = format!(
            "stream s {{ begin tracepoint:syscalls:sys_enter_getppid by tid end tracepoint:syscalls:sys_exit_getppid by tid sample {rate} }}"
        );
        let out = common::run_weft(
            &["-d", "bpf", "-e", &script],
            std::time::Duration::from_secs(20),
        );
        assert_eq!(out.status, Some(1), "{rate}");
        assert!(
            out.stderr.contains(
                "ERROR: a stream's `sample` (one in N: a positive count) must be a literal"
            ),
            "{rate}: {}",
            out.stderr
        );
    }
}
