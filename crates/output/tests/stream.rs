//! Stream records: decoding synthetic records laid out as `abi::stream`
//! describes, and their exact text, JSON and timeline renderings.

use abi::stream::STREAM_STAGES_OFFSET;
use abi::{Field, Layout, StageSpec, StreamField, StreamSpec};
use output::stream::duration_text;
use output::{JsonSink, Sink, TextSink, TimelineWriter, Value, decode_stream_record};

/// A spec laid out like codegen does: first stage timestamps, last ones,
/// stage hits, then the fields in order.
fn spec(name: &str, stages: &[&str], fields: &[(&str, Layout)], timeout_ns: u64) -> StreamSpec {
    let n = stages.len() as u32;
    let stage_specs = stages
        .iter()
        .enumerate()
        .map(|(i, s)| StageSpec {
            name: s.to_string(),
            ts_offset: STREAM_STAGES_OFFSET + 8 * i as u32,
            last_offset: STREAM_STAGES_OFFSET + 8 * (n + i as u32),
            hits_offset: STREAM_STAGES_OFFSET + 8 * (2 * n + i as u32),
            task_offset: match i as u32 {
                0 => 24,
                i => STREAM_STAGES_OFFSET + 24 * n + 8 * (i - 1),
            },
            comm_offset: match i as u32 {
                0 => 40,
                i => STREAM_STAGES_OFFSET + 32 * n - 8 + 16 * (i - 1),
            },
        })
        .collect();
    let mut offset = STREAM_STAGES_OFFSET + 24 * n + 24 * n.saturating_sub(1);
    let mut field_specs = Vec::new();
    for (fname, layout) in fields {
        offset = offset.next_multiple_of(layout.align().max(1));
        field_specs.push(StreamField {
            name: fname.to_string(),
            field: Field {
                offset,
                layout: layout.clone(),
            },
        });
        offset += layout.size();
    }
    StreamSpec {
        captures_identity: true,
        emits_records: true,
        name: name.to_string(),
        state_map: format!("{name}_state"),
        links: Vec::new(),
        links_filed_offset: 0,
        counters_map: format!("{name}_cnt"),
        record_size: offset.next_multiple_of(8),
        stages: stage_specs,
        fields: field_specs,
        timeout_ns,
        max_instances: 10240,
        emit_incomplete: true,
        sample: 1,
        queue: 0,
        queue_map: String::new(),
    }
}

fn read_req() -> StreamSpec {
    spec(
        "read_req",
        &["sys_enter_read", "sys_exit_read"],
        &[("fd", Layout::i64()), ("bytes", Layout::i64())],
        5_000_000_000,
    )
}

fn blk_io() -> StreamSpec {
    spec(
        "blk_io",
        &["block_rq_insert", "block_rq_issue", "block_rq_complete"],
        &[
            (
                "dev",
                Layout::Int {
                    size: 4,
                    signed: false,
                },
            ),
            ("disk", Layout::Str { size: 16 }),
            (
                "error",
                Layout::Int {
                    size: 4,
                    signed: true,
                },
            ),
        ],
        10_000_000_000,
    )
}

/// What the kernel would send: header, fixed part, stages, fields.
struct Rec {
    id: u32,
    start: u64,
    end: u64,
    pid: u32,
    tid: u32,
    cgroup: u64,
    comm: &'static str,
    stages: Vec<(u64, u64)>,
    fields: Vec<Vec<u8>>,
}

fn bytes(spec: &StreamSpec, r: &Rec) -> Vec<u8> {
    let mut b = vec![0u8; spec.record_size as usize];
    let mut put = |at: u32, v: &[u8]| b[at as usize..at as usize + v.len()].copy_from_slice(v);
    put(0, &8u32.to_le_bytes());
    put(4, &r.id.to_le_bytes());
    put(8, &r.start.to_le_bytes());
    put(16, &r.end.to_le_bytes());
    put(
        24,
        &((u64::from(r.pid) << 32) | u64::from(r.tid)).to_le_bytes(),
    );
    put(32, &r.cgroup.to_le_bytes());
    put(40, r.comm.as_bytes());
    for (stage, &(ts, hits)) in spec.stages.iter().zip(&r.stages) {
        put(stage.ts_offset, &ts.to_le_bytes());
        // A stage that fired more than once last did 1 µs later.
        let last = if hits > 1 { ts + 1_000 } else { ts };
        put(stage.last_offset, &last.to_le_bytes());
        put(stage.hits_offset, &hits.to_le_bytes());
    }
    for (field, v) in spec.fields.iter().zip(&r.fields) {
        put(field.field.offset, v);
    }
    b
}

fn str16(s: &str) -> Vec<u8> {
    let mut v = s.as_bytes().to_vec();
    v.resize(16, 0);
    v
}

/// Four records: a complete read, a complete block request with a stage
/// that fired twice, an incomplete one with an unreached stage, and one with
/// a comm that needs quoting and a string field that needs escaping.
fn records() -> (StreamSpec, StreamSpec, Vec<(usize, Vec<u8>)>) {
    let read = read_req();
    let blk = blk_io();
    let recs = vec![
        (
            0,
            bytes(
                &read,
                &Rec {
                    id: 0,
                    start: 5_012_345_678_901,
                    end: 5_012_345_694_135,
                    pid: 1234,
                    tid: 1234,
                    cgroup: 1,
                    comm: "weftwl",
                    stages: vec![(5_012_345_678_901, 1), (5_012_345_694_135, 1)],
                    fields: vec![3i64.to_le_bytes().to_vec(), 4096i64.to_le_bytes().to_vec()],
                },
            ),
        ),
        (
            1,
            bytes(
                &blk,
                &Rec {
                    id: 1,
                    start: 6_000_000_000_000,
                    end: 6_000_002_001_500,
                    pid: 1234,
                    tid: 1240,
                    cgroup: 7,
                    comm: "weftwl",
                    stages: vec![
                        (6_000_000_000_000, 1),
                        (6_000_000_000_812, 2),
                        (6_000_002_001_500, 1),
                    ],
                    fields: vec![
                        8_388_608u32.to_le_bytes().to_vec(),
                        str16("sda"),
                        0i32.to_le_bytes().to_vec(),
                    ],
                },
            ),
        ),
        (
            1,
            bytes(
                &blk,
                &Rec {
                    id: 1,
                    start: 6_000_001_000_000,
                    end: 0,
                    pid: 1234,
                    tid: 1240,
                    cgroup: 7,
                    comm: "weftwl",
                    stages: vec![(6_000_001_000_000, 1), (0, 0), (0, 0)],
                    fields: vec![
                        8_388_608u32.to_le_bytes().to_vec(),
                        str16("sda"),
                        (-5i32).to_le_bytes().to_vec(),
                    ],
                },
            ),
        ),
        (
            1,
            bytes(
                &blk,
                &Rec {
                    id: 1,
                    start: 7_000_000_000_000,
                    end: 7_001_500_000_000,
                    pid: 99,
                    tid: 99,
                    cgroup: 0,
                    comm: "kworker/0:1 x",
                    stages: vec![
                        (7_000_000_000_000, 1),
                        (7_000_000_500_000, 1),
                        (7_001_500_000_000, 1),
                    ],
                    fields: vec![
                        1u32.to_le_bytes().to_vec(),
                        str16("a \"b\""),
                        (-1i32).to_le_bytes().to_vec(),
                    ],
                },
            ),
        ),
    ];
    (read, blk, recs)
}

/// The cgroup paths user space found for the records: the root's, a
/// service's (a space in it), none for cgroup 7's second record (removed
/// since: its id shows) and none for a record without a cgroup.
const PATHS: [Option<&str>; 4] = [Some("/"), Some("/system.slice/a b.service"), None, None];

fn replay(sink: &mut dyn Sink) {
    let (read, blk, recs) = records();
    let specs = [read, blk];
    for ((id, b), path) in recs.iter().zip(PATHS) {
        let mut record = decode_stream_record(&specs[*id], b);
        record.cgroup_path = path.map(String::from);
        sink.stream_record(&record).unwrap();
    }
}

const TEXT: &str = "\
read_req pid=1234 tid=1234 comm=weftwl cgroup=/ start=5012.345678901 dur=15.234us [sys_enter_read +0 > sys_exit_read +15.234us] fd=3 bytes=4096
blk_io pid=1234 tid=1240 comm=weftwl cgroup=\"/system.slice/a b.service\" start=6000.000000000 dur=2.001ms [block_rq_insert +0 > block_rq_issue +812ns x2 (last +1.000us) > block_rq_complete +2.000ms] dev=8388608 disk=sda error=0
blk_io pid=1234 tid=1240 comm=weftwl cgroup=7 start=6000.001000000 incomplete [block_rq_insert +0 > block_rq_issue - > block_rq_complete -] dev=8388608 disk=sda error=-5
blk_io pid=99 tid=99 comm=\"kworker/0:1 x\" start=7000.000000000 dur=1.500s [block_rq_insert +0 > block_rq_issue +500.000us > block_rq_complete +1.499s] dev=1 disk=\"a \\\"b\\\"\" error=-1
";

const JSON: &str = r#"{"type": "stream", "data": {"stream": "read_req", "complete": true, "pid": 1234, "tid": 1234, "comm": "weftwl", "cgroup": 1, "cgroup_path": "/", "start_ns": 5012345678901, "end_ns": 5012345694135, "duration_ns": 15234, "in_order": true, "stages": [{"name": "sys_enter_read", "ts_ns": 5012345678901, "last_ns": 5012345678901, "offset_ns": 0, "delta_ns": 0, "hits": 1}, {"name": "sys_exit_read", "ts_ns": 5012345694135, "last_ns": 5012345694135, "offset_ns": 15234, "delta_ns": 15234, "hits": 1}], "fields": {"fd": 3, "bytes": 4096}}}
{"type": "stream", "data": {"stream": "blk_io", "complete": true, "pid": 1234, "tid": 1240, "comm": "weftwl", "cgroup": 7, "cgroup_path": "/system.slice/a b.service", "start_ns": 6000000000000, "end_ns": 6000002001500, "duration_ns": 2001500, "in_order": true, "stages": [{"name": "block_rq_insert", "ts_ns": 6000000000000, "last_ns": 6000000000000, "offset_ns": 0, "delta_ns": 0, "hits": 1}, {"name": "block_rq_issue", "ts_ns": 6000000000812, "last_ns": 6000000001812, "offset_ns": 812, "delta_ns": 812, "hits": 2}, {"name": "block_rq_complete", "ts_ns": 6000002001500, "last_ns": 6000002001500, "offset_ns": 2001500, "delta_ns": 2000688, "hits": 1}], "fields": {"dev": 8388608, "disk": "sda", "error": 0}}}
{"type": "stream", "data": {"stream": "blk_io", "complete": false, "pid": 1234, "tid": 1240, "comm": "weftwl", "cgroup": 7, "cgroup_path": null, "start_ns": 6000001000000, "end_ns": 0, "duration_ns": 0, "in_order": true, "stages": [{"name": "block_rq_insert", "ts_ns": 6000001000000, "last_ns": 6000001000000, "offset_ns": 0, "delta_ns": 0, "hits": 1}, {"name": "block_rq_issue", "ts_ns": 0, "last_ns": 0, "offset_ns": 0, "delta_ns": 0, "hits": 0}, {"name": "block_rq_complete", "ts_ns": 0, "last_ns": 0, "offset_ns": 0, "delta_ns": 0, "hits": 0}], "fields": {"dev": 8388608, "disk": "sda", "error": -5}}}
{"type": "stream", "data": {"stream": "blk_io", "complete": true, "pid": 99, "tid": 99, "comm": "kworker/0:1 x", "cgroup": 0, "cgroup_path": null, "start_ns": 7000000000000, "end_ns": 7001500000000, "duration_ns": 1500000000, "in_order": true, "stages": [{"name": "block_rq_insert", "ts_ns": 7000000000000, "last_ns": 7000000000000, "offset_ns": 0, "delta_ns": 0, "hits": 1}, {"name": "block_rq_issue", "ts_ns": 7000000500000, "last_ns": 7000000500000, "offset_ns": 500000, "delta_ns": 500000, "hits": 1}, {"name": "block_rq_complete", "ts_ns": 7001500000000, "last_ns": 7001500000000, "offset_ns": 1500000000, "delta_ns": 1499500000, "hits": 1}], "fields": {"dev": 1, "disk": "a \"b\"", "error": -1}}}
"#;

const TIMELINE: &str = r#"{"traceEvents": [
{"ph": "M", "name": "process_name", "pid": 99, "tid": 99, "args": {"name": "kworker/0:1 x"}},
{"ph": "M", "name": "process_name", "pid": 1234, "tid": 1234, "args": {"name": "weftwl"}},
{"ph": "M", "name": "thread_name", "pid": 99, "tid": 99, "args": {"name": "kworker/0:1 x"}},
{"ph": "M", "name": "thread_name", "pid": 1234, "tid": 1234, "args": {"name": "weftwl"}},
{"ph": "M", "name": "thread_name", "pid": 1234, "tid": 1240, "args": {"name": "weftwl"}},
{"ph": "M", "name": "thread_name", "pid": 1234, "tid": 4194304, "args": {"name": "weftwl 1240 (overlap 1)"}},
{"ph": "X", "name": "blk_io", "cat": "stream", "ts": 7000000000.000, "dur": 1500000.000, "pid": 99, "tid": 99, "args": {"dev": 1, "disk": "a \"b\"", "error": -1}},
{"ph": "X", "name": "block_rq_insert → block_rq_issue", "cat": "stage", "ts": 7000000000.000, "dur": 500.000, "pid": 99, "tid": 99, "args": {"hits": 1}},
{"ph": "X", "name": "block_rq_issue → block_rq_complete", "cat": "stage", "ts": 7000000500.000, "dur": 1499500.000, "pid": 99, "tid": 99, "args": {"hits": 1}},
{"ph": "X", "name": "read_req", "cat": "stream", "ts": 5012345678.901, "dur": 15.234, "pid": 1234, "tid": 1234, "args": {"cgroup": "/", "fd": 3, "bytes": 4096}},
{"ph": "X", "name": "sys_enter_read → sys_exit_read", "cat": "stage", "ts": 5012345678.901, "dur": 15.234, "pid": 1234, "tid": 1234, "args": {"hits": 1}},
{"ph": "X", "name": "blk_io", "cat": "stream", "ts": 6000000000.000, "dur": 2001.500, "pid": 1234, "tid": 1240, "args": {"cgroup": "/system.slice/a b.service", "dev": 8388608, "disk": "sda", "error": 0}},
{"ph": "X", "name": "block_rq_insert → block_rq_issue", "cat": "stage", "ts": 6000000000.000, "dur": 0.812, "pid": 1234, "tid": 1240, "args": {"hits": 2, "last_hit_us": 1.000}},
{"ph": "X", "name": "block_rq_issue → block_rq_complete", "cat": "stage", "ts": 6000000000.812, "dur": 2000.688, "pid": 1234, "tid": 1240, "args": {"hits": 1}},
{"ph": "X", "name": "blk_io", "cat": "stream,incomplete", "ts": 6000001000.000, "dur": 0.000, "pid": 1234, "tid": 4194304, "args": {"incomplete": true, "dev": 8388608, "disk": "sda", "error": -5}}
],
"displayTimeUnit": "ns"}
"#;

fn timeline() -> String {
    let (read, blk, recs) = records();
    let specs = [read, blk];
    let mut writer = TimelineWriter::new();
    for ((id, b), path) in recs.iter().zip(PATHS) {
        let mut record = decode_stream_record(&specs[*id], b);
        record.cgroup_path = path.map(String::from);
        writer.push(&record);
    }
    let mut out = Vec::new();
    writer.write_to(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn text_golden() {
    let mut sink = TextSink::new(Vec::new());
    replay(&mut sink);
    assert_eq!(String::from_utf8(sink.into_inner()).unwrap(), TEXT);
}

#[test]
fn json_golden() {
    let mut sink = JsonSink::new(Vec::new());
    replay(&mut sink);
    let got = String::from_utf8(sink.into_inner()).unwrap();
    assert_eq!(got, JSON);
    for line in got.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("valid JSON");
        assert_eq!(v["type"], "stream");
    }
}

#[test]
fn timeline_golden() {
    assert_eq!(timeline(), TIMELINE);
}

#[test]
fn timeline_parses_with_the_right_events() {
    let v: serde_json::Value = serde_json::from_str(&timeline()).expect("valid JSON");
    assert_eq!(v["displayTimeUnit"], "ns");
    let events = v["traceEvents"].as_array().unwrap();
    let phase = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count();
    // 4 instances, plus 1 + 2 + 0 + 2 stage intervals.
    assert_eq!(phase("X"), 4 + 5);
    // 2 processes, 3 threads, 1 overlap lane.
    assert_eq!(phase("M"), 6);
    let read = events
        .iter()
        .find(|e| e["name"] == "read_req")
        .expect("read_req slice");
    assert_eq!(read["ts"].as_f64(), Some(5_012_345_678.901));
    assert_eq!(read["dur"].as_f64(), Some(15.234));
    assert_eq!(read["args"]["bytes"], 4096);
    // Stage slices nest in their instance.
    for e in events.iter().filter(|e| e["cat"] == "stage") {
        let parent = events
            .iter()
            .find(|p| {
                p["ph"] == "X"
                    && p["cat"] != "stage"
                    && p["tid"] == e["tid"]
                    && p["ts"].as_f64() <= e["ts"].as_f64()
            })
            .expect("parent slice");
        let end = |x: &serde_json::Value| x["ts"].as_f64().unwrap() + x["dur"].as_f64().unwrap();
        assert!(end(e) <= end(parent) + 1e-3, "{e} outside {parent}");
    }
}

#[test]
fn timeline_counts_what_it_leaves_out() {
    let (read, _, recs) = records();
    let mut writer = TimelineWriter::with_max_records(1);
    for _ in 0..3 {
        writer.push(&decode_stream_record(&read, &recs[0].1));
    }
    assert_eq!((writer.len(), writer.dropped()), (1, 2));
    let mut out = Vec::new();
    writer.write_to(&mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["traceEvents"].as_array().unwrap().len(), 2 + 2);
}

#[test]
fn empty_timeline_is_valid_json() {
    let mut out = Vec::new();
    TimelineWriter::new().write_to(&mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["traceEvents"].as_array().map(Vec::len), Some(0));
}

#[test]
fn decode_fields_and_stages() {
    let (_, blk, recs) = records();
    let r = decode_stream_record(&blk, &recs[1].1);
    assert!(r.complete);
    assert_eq!((r.pid, r.tid, r.cgroup), (1234, 1240, 7));
    assert_eq!(r.comm, b"weftwl");
    assert_eq!(r.duration_ns, 2_001_500);
    let deltas: Vec<(i64, u64)> = r.stages.iter().map(|s| (s.delta_ns, s.hits)).collect();
    assert_eq!(deltas, [(0, 1), (812, 2), (2_000_688, 1)]);
    assert!(r.in_order);
    assert_eq!(
        r.fields,
        [
            ("dev", Value::UInt(8_388_608)),
            ("disk", Value::str("sda")),
            ("error", Value::Int(0)),
        ]
    );
    assert_eq!(r.last_reached_ns(), 6_000_002_001_500);
}

/// A stage that fired before the stage written above it keeps its time:
/// text shows a negative step, JSON a negative `delta_ns`, and all three
/// outputs place every stage at the same offset from the start.
#[test]
fn a_stage_that_fired_before_its_predecessor_keeps_its_time() {
    let spec = spec(
        "gai",
        &["begin", "resolved", "connect", "done"],
        &[],
        10_000_000_000,
    );
    // connect (written after resolved) fired 100 us after begin, resolved at 300 us.
    let rec = Rec {
        id: 0,
        start: 1_000_000_000,
        end: 1_000_500_000,
        pid: 7,
        tid: 7,
        cgroup: 0,
        comm: "gai",
        stages: vec![
            (1_000_000_000, 1),
            (1_000_300_000, 1),
            (1_000_100_000, 1),
            (1_000_500_000, 1),
        ],
        fields: vec![],
    };
    let b = bytes(&spec, &rec);
    let r = decode_stream_record(&spec, &b);
    assert!(!r.in_order);
    let offsets: Vec<u64> = r.stages.iter().map(|s| s.offset_ns).collect();
    assert_eq!(offsets, [0, 300_000, 100_000, 500_000]);
    let deltas: Vec<i64> = r.stages.iter().map(|s| s.delta_ns).collect();
    assert_eq!(deltas, [0, 300_000, -200_000, 400_000]);

    let mut sink = TextSink::new(Vec::new());
    sink.stream_record(&r).unwrap();
    assert_eq!(
        String::from_utf8(sink.into_inner()).unwrap(),
        "gai pid=7 tid=7 comm=gai start=1.000000000 dur=500.000us out-of-order [begin +0 > resolved +300.000us > connect -200.000us > done +400.000us]\n"
    );
    let mut sink = JsonSink::new(Vec::new());
    sink.stream_record(&r).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&sink.into_inner()).unwrap();
    assert_eq!(v["data"]["in_order"], false);
    let json_offsets: Vec<u64> = v["data"]["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["offset_ns"].as_u64().unwrap())
        .collect();
    assert_eq!(json_offsets, offsets);
    assert_eq!(v["data"]["stages"][2]["delta_ns"], -200_000);

    // The timeline draws the intervals in the order the stages fired.
    let mut writer = TimelineWriter::new();
    writer.push(&r);
    let mut out = Vec::new();
    writer.write_to(&mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let instance = events.iter().find(|e| e["name"] == "gai").unwrap();
    assert_eq!(instance["args"]["out_of_order"], true);
    let steps: Vec<(String, f64, f64)> = events
        .iter()
        .filter(|e| e["cat"] == "stage")
        .map(|e| {
            let name = e["name"].as_str().unwrap().to_string();
            (name, e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap())
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("begin → connect".to_string(), 1_000_000.0, 100.0),
            ("connect → resolved".to_string(), 1_000_100.0, 200.0),
            ("resolved → done".to_string(), 1_000_300.0, 200.0),
        ]
    );
}

#[test]
fn short_and_garbage_input_never_panics() {
    let (read, blk, recs) = records();
    for spec in [&read, &blk] {
        for (_, b) in &recs {
            for len in 0..=b.len() {
                let r = decode_stream_record(spec, &b[..len]);
                let mut text = TextSink::new(Vec::new());
                text.stream_record(&r).unwrap();
                let mut json = JsonSink::new(Vec::new());
                json.stream_record(&r).unwrap();
            }
        }
    }
    let empty = decode_stream_record(&read, &[]);
    assert!(!empty.complete);
    assert_eq!((empty.pid, empty.start_ns, empty.fields.len()), (0, 0, 2));
    // A spec whose offsets point far outside the record.
    let mut wild = read.clone();
    wild.stages[0].ts_offset = u32::MAX;
    wild.fields[0].field.offset = u32::MAX - 2;
    let r = decode_stream_record(&wild, &recs[0].1);
    assert_eq!(r.stages[0].ts_ns, 0);
    assert_eq!(r.fields[0].1, Value::Int(0));
    let mut writer = TimelineWriter::new();
    writer.push(&r);
    writer.push(&empty);
    writer.write_to(&mut Vec::new()).unwrap();
}

#[test]
fn durations_read_well() {
    let cases = [
        (0, "0ns"),
        (812, "812ns"),
        (999, "999ns"),
        (1_000, "1.000us"),
        (15_234, "15.234us"),
        (2_001_500, "2.001ms"),
        (1_500_000_000, "1.500s"),
        (u64::MAX, "18446744073.709s"),
    ];
    for (ns, text) in cases {
        assert_eq!(duration_text(ns), text, "{ns}");
    }
}
