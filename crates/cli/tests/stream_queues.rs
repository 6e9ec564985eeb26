//! `queue N` on the running kernel: several open instances per key, taken
//! in begin order by each later stage.

mod common;

use common::{stream_records, trace_workload};
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
    let records: Vec<Value> = stream_records(&out.stdout);
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

#[test]
fn each_stage_carries_and_is_drawn_on_the_thread_that_ran_it() {
    require_root!();
    // The writer thread (the main one) begins each instance; the reader
    // thread runs `reading` and `read`.
    let timeline = common::scratch("pipe-tasks.timeline");
    let t = timeline.display().to_string();
    let out = trace_workload(PIPE, "pipe-bursts 20 5", &["-f", "json", "--timeline", &t]);
    let records: Vec<Value> = stream_records(&out.stdout);
    assert_eq!(records.len(), 20, "{}", out.stderr);
    let mut readers = std::collections::BTreeSet::new();
    for r in &records {
        let stages = r["stages"].as_array().unwrap();
        // The begin stage ran in the record's own task: nothing added.
        assert!(stages[0].get("tid").is_none(), "{r}");
        for s in &stages[1..] {
            assert_eq!(s["pid"], r["pid"], "{r}");
            assert_ne!(s["tid"], r["tid"], "{r}");
            assert_eq!(s["comm"], "weftwl", "{r}");
            readers.insert(s["tid"].as_u64().unwrap());
        }
    }
    assert_eq!(readers.len(), 1, "one reader thread: {readers:?}");
    let reader = *readers.iter().next().unwrap();
    let writer = records[0]["tid"].as_u64().unwrap();

    let text = std::fs::read_to_string(&timeline).expect("timeline written");
    let _ = std::fs::remove_file(&timeline);
    let v: Value = serde_json::from_str(&text).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let on = |name: &str| -> Vec<u64> {
        events
            .iter()
            .filter(|e| e["name"] == name && e["ph"] == "X")
            .map(|e| e["tid"].as_u64().unwrap())
            .collect()
    };
    // Instances on the writer's track (up to 5 overlap: the others on
    // tracks of their own made for the overlap).
    let lanes = on("pipe");
    assert_eq!(lanes.len(), 20, "{text}");
    assert!(lanes.contains(&writer), "{text}");
    assert!(!lanes.contains(&reader), "{text}");
    assert_eq!(on("written → reading"), vec![reader; 20], "{text}");
    assert_eq!(on("reading → read"), vec![reader; 20], "{text}");
    // One arrow per instance, from its track to the reader's.
    let starts: Vec<&Value> = events.iter().filter(|e| e["ph"] == "s").collect();
    let finishes: Vec<&Value> = events.iter().filter(|e| e["ph"] == "f").collect();
    assert_eq!((starts.len(), finishes.len()), (20, 20), "{text}");
    assert!(
        starts
            .iter()
            .all(|e| lanes.contains(&e["tid"].as_u64().unwrap())),
        "{text}"
    );
    assert!(finishes.iter().all(|e| e["tid"] == reader), "{text}");
    assert!(
        events
            .iter()
            .any(|e| e["name"] == "thread_name" && e["tid"] == reader),
        "the reader's track is named: {text}"
    );
}
