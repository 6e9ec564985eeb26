//! `--otlp` against the official protobuf definitions: a receiver built on
//! the `opentelemetry-proto` package from PyPI (in the venv
//! `scripts/setup.sh` makes, `target/otlp-venv`) decodes what weft posts,
//! and for N requests finds exactly N root spans, each with its stage
//! children and attributes. A collector that is away loses records, and
//! weft says how many at exit.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{run_weft, scratch, workload};
use serde_json::Value;

/// Three stages: the sleep's syscall, the switch out, the return.
const NAP_STREAM: &str = r#"stream nap {
    begin tracepoint:syscalls:sys_enter_nanosleep /pid == cpid && comm == "weftwl"/ by tid as task { $ns = args->rqtp->tv_nsec; }
    stage sleep tracepoint:sched:sched_switch by args->prev_pid as task
    end tracepoint:syscalls:sys_exit_nanosleep by tid as task { $ret = args->ret; }
}"#;

/// A process killed (and reaped) when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The Python with `opentelemetry-proto`: `WEFT_OTLP_PYTHON`, else the venv
/// `scripts/setup.sh` makes.
fn otlp_python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("WEFT_OTLP_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/otlp-venv/bin/python");
    venv.exists().then_some(venv)
}

/// Starts the receiver (answering `status`); returns it, its port and the file it writes.
fn receiver(python: &PathBuf, name: &str, status: u16) -> (Running, u16, PathBuf) {
    let out = scratch(name);
    let _ = std::fs::remove_file(&out);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/otlp_receiver.py");
    let mut child = Command::new(python)
        .arg(&script)
        .arg(&out)
        .arg("120")
        .arg(status.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the receiver starts");
    let stdout = child.stdout.take().unwrap();
    let running = Running(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the receiver says its port within 30 s");
    let port = line.trim().parse().expect("a port");
    (running, port, out)
}

fn requests(out: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    span["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["key"] == key)
        .map_or(&Value::Null, |a| &a["value"])
}

fn nanos(v: &Value) -> u64 {
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[test]
fn every_request_is_one_span_with_its_stage_children() {
    require_root!();
    let python = otlp_python();
    testgate::require!(
        python.is_some(),
        "the opentelemetry-proto venv is missing (scripts/setup.sh makes target/otlp-venv)"
    );
    let (_receiver, port, out) = receiver(python.as_ref().unwrap(), "otlp-spans", 200);
    let n = 60;
    let cmd = format!("{} nanosleep 1000000 {n}", workload().display());
    let url = format!("http://127.0.0.1:{port}");
    let run = run_weft(
        &[
            "-q",
            "--otlp",
            &url,
            "--otlp-batch",
            "16",
            "-c",
            &cmd,
            "-e",
            NAP_STREAM,
        ],
        Duration::from_secs(60),
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    // Nothing lost, so nothing said.
    assert!(!run.stderr.contains("--otlp"), "{}", run.stderr);
    let requests = requests(&out);
    let mut spans = Vec::new();
    for r in requests.iter().filter(|r| r["path"] == "/v1/traces") {
        for rs in r["request"]["resourceSpans"].as_array().unwrap() {
            let resource = &rs["resource"];
            assert_eq!(attr(resource, "service.name")["stringValue"], "weft");
            assert_eq!(attr(resource, "weft.script")["stringValue"], "-e");
            assert!(attr(resource, "host.name")["stringValue"].is_string());
            for ss in rs["scopeSpans"].as_array().unwrap() {
                assert_eq!(ss["scope"]["name"], "weft");
                spans.extend(ss["spans"].as_array().unwrap().iter().cloned());
            }
        }
    }
    // Several batches of at most 16 records each.
    assert!(requests.len() >= n / 16, "{} requests", requests.len());
    let roots: Vec<&Value> = spans
        .iter()
        .filter(|s| s.get("parentSpanId").is_none())
        .collect();
    assert_eq!(roots.len(), n, "{} spans in all", spans.len());
    assert_eq!(spans.len(), 3 * n);
    for root in &roots {
        assert_eq!(root["name"], "nap");
        assert_eq!(root["kind"], "SPAN_KIND_INTERNAL");
        let (start, end) = (
            nanos(&root["startTimeUnixNano"]),
            nanos(&root["endTimeUnixNano"]),
        );
        // A 1 ms sleep, stamped in Unix time (after 2020).
        assert!(end - start >= 1_000_000, "{root}");
        assert!(start > 1_577_836_800_000_000_000, "{root}");
        assert_eq!(attr(root, "thread.name")["stringValue"], "weftwl");
        assert_eq!(
            attr(root, "process.pid")["intValue"],
            attr(root, "thread.id")["intValue"]
        );
        assert_eq!(attr(root, "ns")["intValue"], "1000000");
        assert_eq!(attr(root, "ret")["intValue"], "0");
        assert!(
            attr(root, "linux.cgroup.id")["intValue"].is_string(),
            "{root}"
        );
        assert!(
            attr(root, "process.linux.cgroup")["stringValue"]
                .as_str()
                .is_some_and(|p| p.starts_with('/')),
            "{root}"
        );
        let children: Vec<&Value> = spans
            .iter()
            .filter(|s| s.get("parentSpanId") == Some(&root["spanId"]))
            .collect();
        let names: Vec<&str> = children
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["sleep", "sys_exit_nanosleep"], "{root}");
        for c in &children {
            assert_eq!(c["traceId"], root["traceId"]);
        }
        assert_eq!(nanos(&children[0]["startTimeUnixNano"]), start);
        assert_eq!(
            children[0]["endTimeUnixNano"],
            children[1]["startTimeUnixNano"]
        );
        assert_eq!(nanos(&children[1]["endTimeUnixNano"]), end);
    }
    // Every trace is its own.
    let mut traces: Vec<&str> = roots
        .iter()
        .map(|r| r["traceId"].as_str().unwrap())
        .collect();
    traces.sort();
    traces.dedup();
    assert_eq!(traces.len(), n);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn maps_go_as_otlp_metrics_too() {
    require_root!();
    let python = otlp_python();
    testgate::require!(
        python.is_some(),
        "the opentelemetry-proto venv is missing (scripts/setup.sh makes target/otlp-venv)"
    );
    let (_receiver, port, out) = receiver(python.as_ref().unwrap(), "otlp-metrics", 200);
    let cmd = format!(
        "{} getppid 1000 read 100 600 read 3000 400",
        workload().display()
    );
    let url = format!("http://127.0.0.1:{port}/v1/traces");
    let script = r#"// weft:metric @sizes unit=bytes
tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @calls[comm] = count(); }
tracepoint:syscalls:sys_exit_read /pid == cpid && (args->ret == 100 || args->ret == 3000)/ { @sizes = hist(args->ret); }"#;
    let run = run_weft(
        &[
            "-q",
            "--otlp",
            &url,
            "--otlp-metrics-interval",
            "60s",
            "-c",
            &cmd,
            "-e",
            script,
        ],
        Duration::from_secs(60),
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    // The snapshot at exit has every count.
    let requests = requests(&out);
    let last = requests
        .iter()
        .rev()
        .find(|r| r["path"] == "/v1/metrics")
        .expect("a metrics request");
    let metrics = &last["request"]["resourceMetrics"][0]["scopeMetrics"][0]["metrics"];
    let find = |name: &str| {
        metrics
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {metrics}"))
            .clone()
    };
    let calls = find("weft_calls");
    assert_eq!(calls["sum"]["isMonotonic"], true);
    assert_eq!(
        calls["sum"]["aggregationTemporality"],
        "AGGREGATION_TEMPORALITY_CUMULATIVE"
    );
    let point = &calls["sum"]["dataPoints"][0];
    assert_eq!(point["asInt"], "1000");
    assert_eq!(attr(point, "comm")["stringValue"], "weftwl");
    let sizes = find("weft_sizes_bytes");
    assert_eq!(sizes["unit"], "By");
    let point = &sizes["histogram"]["dataPoints"][0];
    assert_eq!(point["count"], "1000");
    assert!(point.get("sum").is_none(), "{point}");
    let bounds: Vec<f64> = point["explicitBounds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_f64().unwrap())
        .collect();
    assert_eq!(bounds, [127.0, 255.0, 511.0, 1023.0, 2047.0, 4095.0]);
    let counts: Vec<&str> = point["bucketCounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(counts, ["600", "0", "0", "0", "0", "400", "0"]);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn what_the_collector_does_not_take_is_counted_and_said() {
    require_root!();
    let python = otlp_python();
    testgate::require!(
        python.is_some(),
        "the opentelemetry-proto venv is missing (scripts/setup.sh makes target/otlp-venv)"
    );
    // A collector that answers 503 (busy): weft retries, then gives up at exit.
    let (_receiver, port, out) = receiver(python.as_ref().unwrap(), "otlp-busy", 503);
    let n = 30;
    let cmd = format!("{} nanosleep 100000 {n}", workload().display());
    let url = format!("http://127.0.0.1:{port}");
    // The queue holds 10; nothing is sent before exit (a long interval).
    let run = run_weft(
        &[
            "-q",
            "--otlp",
            &url,
            "--otlp-queue",
            "10",
            "--otlp-interval",
            "60s",
            "-c",
            &cmd,
            "-e",
            NAP_STREAM,
        ],
        Duration::from_secs(60),
    );
    assert_eq!(run.status, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "0 stream records sent as 0 spans, {n} dropped (20 with the queue full, 10 not taken by the collector)"
        )),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("HTTP 503"), "{}", run.stderr);
    assert!(requests(&out).is_empty());
    let _ = std::fs::remove_file(&out);
}
