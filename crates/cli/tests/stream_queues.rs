//! `queue N` on the running kernel: several open instances per key, taken
//! in begin order by each later stage.

mod common;

use common::trace_workload;
use serde_json::Value;

/// One instance per message through a pipe between two threads of one
/// process (the key): the writer's write begins it, the reader's read
/// (which says where its buffer is) and the read's return take the oldest.
const PIPE: &str = r#"stream pipe {
    begin written tracepoint:syscalls:sys_enter_write /pid == cpid && args->count == 8/ by pid { $sent = str(args->buf, 9); }
    stage reading tracepoint:syscalls:sys_enter_read /pid == cpid && args->count == 8/ by pid { $rbuf = (uint64)args->buf; }
    end read tracepoint:syscalls:sys_exit_read /pid == cpid && args->ret == 8/ by pid { $got = str($rbuf, 9); }
    queue 64
}"#;

#[test]
fn a_thousand_messages_in_bursts_of_ten_each_once_in_order() {
    require_root!();
    let out = trace_workload(PIPE, "pipe-bursts 1000 10", &["-f", "json"]);
    let records: Vec<Value> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "stream")
        .map(|v| v["data"].clone())
        .collect();
    assert_eq!(records.len(), 1000, "{}", out.stderr);
    for (i, r) in records.iter().enumerate() {
        let want = format!("m{i:07}");
        assert_eq!(r["complete"], true, "{r}");
        // Records come in the order the messages were written, and each
        // read took the message written first: what it read is what the
        // instance's write sent.
        assert_eq!(r["fields"]["sent"], want.as_str(), "record {i}: {r}");
        assert_eq!(r["fields"]["got"], want.as_str(), "record {i}: {r}");
        for s in r["stages"].as_array().unwrap() {
            assert_eq!(s["hits"], 1, "record {i}: {r}");
        }
    }
    assert!(!out.stderr.contains("weft: stream"), "{}", out.stderr);
}

#[test]
fn a_full_queue_pushes_out_its_oldest_and_says_so() {
    require_root!();
    // 4 open per key at most: each burst of 10 pushes out its first 6
    // messages before the reader reads, so only the last 4 of each burst
    // are read by their own instance.
    let script = PIPE.replace("queue 64", "queue 4");
    let out = trace_workload(&script, "pipe-bursts 100 10", &["-f", "json"]);
    let sent: Vec<String> = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "stream")
        .map(|v| v["data"]["fields"]["sent"].as_str().unwrap().to_string())
        .collect();
    let want: Vec<String> = (0..100)
        .filter(|i| i % 10 >= 6)
        .map(|i| format!("m{i:07}"))
        .collect();
    assert_eq!(sent, want, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("weft: stream pipe: 60 pushed out of a full queue"),
        "{}",
        out.stderr
    );
}
