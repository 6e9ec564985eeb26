//! Streams under concurrency, on the running kernel: one instance hit by a
//! stage on several CPUs at once keeps every hit, every `++`/`+=` of its
//! fields, and its stage's true first and last times.

mod common;

use common::{stage, stream_records, trace_workload};

#[test]
fn two_threads_hitting_one_instance_lose_no_hit() {
    require_root!();
    // One instance per process (`by pid`): the main thread's nanosleep
    // begins it, two threads then make 500,000 getppid calls each at the
    // same time (a stage hit on both CPUs at once), and the main thread's
    // write ends it. A plain load-add-store lost ~1,000 of the hits.
    let script = r#"stream hot {
    begin tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ by pid { $n = 0; $sum = 0; $down = 0; }
    stage hit tracepoint:syscalls:sys_enter_getppid /pid == cpid/ by pid { $n++; $sum += 3; $down -= 1; }
    end tracepoint:syscalls:sys_enter_write /pid == cpid/ by pid
}"#;
    let out = trace_workload(
        script,
        "nanosleep 1000 1 getppid-threads 2 500000 write 1 1",
        &["-f", "json"],
    );
    let records = stream_records(&out.stdout);
    assert_eq!(records.len(), 1, "{}\n{}", out.stdout, out.stderr);
    let r = &records[0];
    assert_eq!(r["complete"], true, "{r}");
    let hit = stage(r, "hit");
    assert_eq!(hit["hits"], 1_000_000, "{r}");
    assert_eq!(r["fields"]["n"], 1_000_000, "{r}");
    assert_eq!(r["fields"]["sum"], 3_000_000, "{r}");
    assert_eq!(r["fields"]["down"], -1_000_000, "{r}");
    // The first and last times bound every hit, and lie inside the instance.
    let (first, last) = (
        hit["ts_ns"].as_u64().unwrap(),
        hit["last_ns"].as_u64().unwrap(),
    );
    let (start, end) = (
        r["start_ns"].as_u64().unwrap(),
        r["end_ns"].as_u64().unwrap(),
    );
    assert!(start < first && first < last && last < end, "{r}");
    // Contention the settling could not absorb would be said on stderr.
    assert!(!out.stderr.contains("weft: stream"), "{}", out.stderr);
}
