//! Each shipped stream example (`examples/streams/*.bt`), run on a workload
//! it traces: its records come out with every field filled and right. The
//! examples trace the whole machine, so the checks pick the workload's own
//! records out by what only they have (a size, a comm); `runqueue.bt`,
//! whose events are the machine's busiest, is run with its clauses
//! filtered to the workload's pid, and otherwise unchanged.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::workload;
use serde_json::Value;

fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/streams")
        .join(name)
        .display()
        .to_string()
}

/// `weft -q [extra] EXAMPLE -c 'weft-workload STEPS'`, expecting success.
fn run_example(name: &str, steps: &str, extra: &[&str]) -> common::Outcome {
    let cmd = format!("{} {steps}", workload().display());
    let out = run_example_with(name, &cmd, extra);
    assert_eq!(
        out.status,
        Some(0),
        "{name}\nstdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    out
}

/// `weft -q [extra] EXAMPLE -c CMD` with weft-workload's directory first in
/// PATH (for `uprobe:weft-workload:...`), whatever its exit.
fn run_example_with(name: &str, cmd: &str, extra: &[&str]) -> common::Outcome {
    run_script_with(&example(name), cmd, extra)
}

/// `weft -q [extra] SCRIPT -c CMD`, as [`run_example_with`].
fn run_script_with(path: &str, cmd: &str, extra: &[&str]) -> common::Outcome {
    let bin_dir = workload().parent().unwrap().display().to_string();
    let path_var = format!("{bin_dir}:{}", std::env::var("PATH").unwrap_or_default());
    let mut args = vec!["-q"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[path, "-c", cmd]);
    common::run(
        Command::new(common::weft())
            .env("PATH", path_var)
            .args(&args),
        Duration::from_secs(60),
    )
}

/// A Python `http.server` on 127.0.0.1, stopped (killed) when dropped, and
/// a client script that makes N requests to it.
struct HttpServer {
    child: std::process::Child,
    port: u16,
    client: PathBuf,
}

impl HttpServer {
    fn start(tag: &str) -> HttpServer {
        // A free port: the kernel picks one, which is then let go.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new("python3")
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 (scripts/setup.sh installs it)");
        let mut server = HttpServer {
            child,
            port,
            client: common::scratch(&format!("{tag}-client.py")),
        };
        std::fs::write(
            &server.client,
            "import sys, urllib.request\n\
             for _ in range(int(sys.argv[2])):\n    \
             urllib.request.urlopen(f'http://127.0.0.1:{sys.argv[1]}/', timeout=10).read()\n",
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "http.server did not listen on {port}"
            );
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("http.server exited: {status}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// The command that makes `n` requests.
    fn client(&self, n: u32) -> String {
        format!("python3 {} {} {n}", self.client.display(), self.port)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.client);
    }
}

/// The stages of a record in written order: `(name, ts_ns, last_ns, hits)`.
fn stages(record: &Value) -> Vec<(String, u64, u64, u64)> {
    record["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["ts_ns"].as_u64().unwrap(),
                s["last_ns"].as_u64().unwrap(),
                s["hits"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn json_records(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "stream")
        .map(|v| v["data"].clone())
        .collect()
}

fn stage_ts(record: &Value, name: &str) -> u64 {
    record["stages"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .and_then(|s| s["ts_ns"].as_u64())
        .unwrap_or(0)
}

/// The total count of one key's histogram in bpftrace's text output.
fn hist_total(stdout: &str, heading: &str) -> u64 {
    stdout
        .lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            l.split('|')
                .next()?
                .split_whitespace()
                .last()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// Sizes only the workload's O_DIRECT writes have (5 and 6 pages), one per
/// test, as the tests run at the same time and each example sees both.
const BLOCK_IO_SIZE: u64 = 20480;
const DIO_SIZE: u64 = 24576;

fn dio_file(test: &str) -> String {
    format!("/var/tmp/weft-test-{}-{test}", std::process::id())
}

#[test]
fn read_latency_emits_the_slow_reads_with_their_fd_and_bytes() {
    require_root!();
    // Three one-byte reads from a pipe, each answered 30 ms later: over the
    // example's 10 ms threshold, so its handler emits them.
    let out = run_example("read_latency.bt", "slow-read 30 3", &[]);
    let records: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("read_req ") && l.contains(" comm=weftwl "))
        .filter(|l| l.contains(" bytes=1 "))
        .collect();
    assert_eq!(records.len(), 3, "{}", out.stdout);
    for r in &records {
        let dur = r.split(" dur=").nth(1).unwrap().split(' ').next().unwrap();
        assert!(dur.ends_with("ms"), "{r}");
        let ms: f64 = dur.trim_end_matches("ms").parse().unwrap();
        assert!((25.0..1000.0).contains(&ms), "{r}");
        let fd: u64 = r.rsplit(" fd=").next().unwrap().parse().unwrap();
        assert!(fd >= 3, "{r}");
        assert!(r.contains("[sys_enter_read +0 > sys_exit_read +"), "{r}");
    }
    // The handler's histogram holds every read of the workload, slow or not.
    assert!(
        hist_total(&out.stdout, "@us[weftwl]:") >= 3,
        "{}",
        out.stdout
    );
}

#[test]
fn block_io_records_the_issuer_and_size_of_each_request() {
    require_root!();
    let file = dio_file("block-io");
    let out = run_example(
        "block_io.bt",
        &format!("dio-write {file} {BLOCK_IO_SIZE} 3"),
        &["-f", "json"],
    );
    let _ = std::fs::remove_file(&file);
    // The workload's requests: its size, inserted in its own context (a
    // kworker's writeback may have the same size). The `issuer` field must
    // then say the same as the record's comm.
    let records: Vec<Value> = json_records(&out.stdout)
        .into_iter()
        .filter(|r| r["fields"]["bytes"] == BLOCK_IO_SIZE && r["comm"] == "weftwl")
        .collect();
    assert_eq!(records.len(), 3, "{}", out.stdout);
    for r in &records {
        // The comm was overwritten by the next field's 8-byte store (issue 9).
        assert_eq!(r["fields"]["issuer"], "weftwl", "{r}");
        assert!(stage_ts(r, "block_rq_insert") > 0, "{r}");
        assert!(
            stage_ts(r, "block_rq_issue") >= stage_ts(r, "block_rq_insert"),
            "{r}"
        );
        // This kernel completes some requests through a batched path that
        // does not fire block_rq_complete: those come out incomplete at exit.
        if r["complete"] == true {
            assert_eq!(r["fields"]["error"], 0, "{r}");
            assert!(stage_ts(r, "block_rq_complete") > 0, "{r}");
        }
    }
}

#[test]
fn dio_write_follows_each_write_through_its_block_request() {
    require_root!();
    let file = dio_file("dio-write");
    let out = run_example(
        "dio_write.bt",
        &format!("dio-write {file} {DIO_SIZE} 3"),
        &["-f", "json"],
    );
    let _ = std::fs::remove_file(&file);
    let records: Vec<Value> = json_records(&out.stdout)
        .into_iter()
        .filter(|r| r["fields"]["len"] == DIO_SIZE)
        .collect();
    assert_eq!(records.len(), 3, "{}", out.stdout);
    let mut sectors = Vec::new();
    for r in &records {
        assert_eq!(r["complete"], true, "{r}");
        assert_eq!(r["comm"], "weftwl", "{r}");
        assert_eq!(r["fields"]["ret"], DIO_SIZE, "{r}");
        assert!(r["fields"]["fd"].as_u64().unwrap() >= 3, "{r}");
        for stage in ["sys_enter_pwrite64", "insert", "issue", "sys_exit_pwrite64"] {
            assert!(stage_ts(r, stage) > 0, "{stage}: {r}");
        }
        sectors.push(r["fields"]["sector"].as_u64().unwrap());
    }
    // Consecutive writes: consecutive requests of DIO_SIZE / 512 sectors.
    sectors.sort_unstable();
    assert!(
        sectors.windows(2).all(|w| w[1] - w[0] == DIO_SIZE / 512),
        "{sectors:?}"
    );
}

#[test]
fn runqueue_counts_each_wakeup_under_the_woken_task() {
    require_root!();
    // 20 sleeps of 2 ms: 20 wakeups of the workload, mostly by the timer
    // interrupt in another task's context (the waker's comm is `swapper/N`).
    // The clauses are filtered to the workload's pid, so the machine's other
    // wakeups neither open instances nor fill the hist.
    let text = std::fs::read_to_string(example("runqueue.bt")).unwrap();
    let filtered = text
        .replacen(
            "sched_wakeup by args->pid",
            "sched_wakeup /args->pid == cpid/ by args->pid",
            1,
        )
        .replacen(
            "sched_switch by args->next_pid",
            "sched_switch /args->next_pid == cpid/ by args->next_pid",
            1,
        );
    assert_eq!(filtered.matches("== cpid/").count(), 2, "{text}");
    let script = common::scratch("runqueue-own.bt");
    std::fs::write(&script, filtered).unwrap();
    let cmd = format!("{} nanosleep 2000000 20", workload().display());
    let out = run_script_with(script.to_str().unwrap(), &cmd, &["--stats"]);
    let _ = std::fs::remove_file(&script);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    // A tracepoint program is skipped while another BPF program runs on
    // its CPU (the timer interrupt can land in one: any tracer's, on a busy
    // machine), and the kernel counts each skip: the only wakeups missing
    // are those.
    let missed: u64 = out
        .stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("tracepoint:sched:"))
        .map(|l| l.split_whitespace().last().unwrap().parse::<u64>().unwrap())
        .sum();
    let total = hist_total(&out.stdout, "@runq_us[weftwl]:");
    assert!(
        (20 - missed.min(20)..=20).contains(&total),
        "{total} wakeups, {missed} runs skipped\n{}\n{}",
        out.stdout,
        out.stderr
    );
}

#[test]
fn tcp_connect_follows_three_requests_from_the_lookup_to_established() {
    require_root!();
    let server = HttpServer::start("tcp-connect");
    let out = run_example_with("tcp_connect.bt", &server.client(3), &["-f", "json"]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let records: Vec<Value> = json_records(&out.stdout)
        .into_iter()
        .filter(|r| r["fields"]["dport"] == server.port)
        .collect();
    assert_eq!(records.len(), 3, "{}", out.stdout);
    for r in &records {
        assert_eq!(r["complete"], true, "{r}");
        assert_eq!(r["comm"], "python3", "{r}");
        assert_eq!(r["fields"]["daddr"], "127.0.0.1", "{r}");
        assert_eq!(r["fields"]["lookup_ret"], 0, "{r}");
        let st = stages(r);
        let names: Vec<&str> = st.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(
            names,
            ["lookup", "resolved", "connect", "syn", "established"]
        );
        // Every stage reached, in time order; the lookup once.
        assert!(st.iter().all(|s| s.1 > 0), "{r}");
        assert!(st.windows(2).all(|w| w[0].1 <= w[1].1), "{r}");
        assert_eq!(st[0].3, 1, "{r}");
    }
}

#[test]
fn tcp_lifecycle_gives_one_record_per_connection_ending_in_close() {
    require_root!();
    let server = HttpServer::start("tcp-lifecycle");
    let out = run_example_with("tcp_lifecycle.bt", &server.client(3), &["-f", "json"]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let records: Vec<Value> = json_records(&out.stdout)
        .into_iter()
        .filter(|r| r["fields"]["dport"] == server.port)
        .collect();
    assert_eq!(records.len(), 3, "{}", out.stdout);
    for r in &records {
        assert_eq!(r["complete"], true, "{r}");
        let st = stages(r);
        let close = st.last().unwrap();
        assert_eq!(close.0, "close");
        // CLOSE comes after every hit of every other stage.
        assert!(st.iter().all(|s| s.1 > 0 && s.2 <= close.1), "{r}");
        assert!(st[1].1 >= st[0].1, "established after syn_sent: {r}");
        // The request went out and the page came back.
        assert!(r["fields"]["sent"].as_i64().unwrap() > 0, "{r}");
        assert!(r["fields"]["received"].as_i64().unwrap() > 0, "{r}");
        assert!(r["fields"]["sport"].as_u64().unwrap() > 0, "{r}");
    }
}

#[test]
fn uprobe_to_tracepoint_times_each_libc_read_to_its_syscall_exit() {
    require_root!();
    let out = run_example("uprobe_to_tracepoint.bt", "read 100 5", &["-f", "json"]);
    let records: Vec<Value> = json_records(&out.stdout)
        .into_iter()
        .filter(|r| r["comm"] == "weftwl" && r["fields"]["asked"] == 100)
        .collect();
    assert_eq!(records.len(), 5, "{}", out.stdout);
    for r in &records {
        assert_eq!(r["complete"], true, "{r}");
        assert_eq!(r["fields"]["bytes"], 100, "{r}");
        assert!(r["duration_ns"].as_u64().unwrap() > 0, "{r}");
    }
}

#[test]
fn kprobe_to_tracepoint_runs_where_kprobes_do_and_says_why_not_elsewhere() {
    require_root!();
    let cmd = format!("{} read 100 5", workload().display());
    let out = run_example_with("kprobe_to_tracepoint.bt", &cmd, &["-f", "json"]);
    if out.status == Some(0) {
        let records: Vec<Value> = json_records(&out.stdout)
            .into_iter()
            .filter(|r| r["comm"] == "weftwl" && r["fields"]["asked"] == 100)
            .collect();
        assert_eq!(records.len(), 5, "{}", out.stdout);
        assert!(records.iter().all(|r| r["fields"]["bytes"] == 100));
    } else {
        // This machine's kernel has neither kprobes nor fentry: one sentence.
        assert_eq!(out.status, Some(1), "{}", out.stderr);
        assert!(
            out.stderr.contains("kprobe:vfs_read") && out.stderr.contains("not supported"),
            "{}",
            out.stderr
        );
        assert!(out.stdout.trim().is_empty(), "{}", out.stdout);
    }
}

#[test]
fn server_request_follows_each_request_through_its_system_calls() {
    require_root!();
    let file = dio_file("server-request");
    let out = run_example(
        "server_request.bt",
        &format!("serve {file} 5"),
        &["-f", "json"],
    );
    let _ = std::fs::remove_file(&file);
    let records = json_records(&out.stdout);
    assert_eq!(records.len(), 5, "{}", out.stdout);
    for r in &records {
        assert_eq!(r["complete"], true, "{r}");
        // The handler runs in the server thread, not the main one.
        assert_ne!(r["tid"], r["pid"], "{r}");
        let hits: Vec<(String, u64)> = stages(r).into_iter().map(|s| (s.0, s.3)).collect();
        let want = [
            ("handler", 1),
            ("read", 1),
            ("write", 2),
            ("fsync", 1),
            ("done", 1),
        ];
        assert_eq!(hits, want.map(|(n, h)| (n.to_string(), h)), "{r}");
        // "request N\n" (10 bytes) in, "done\n" (5) out.
        assert_eq!(r["fields"]["size"], 10, "{r}");
        assert_eq!(r["fields"]["written"], 15, "{r}");
    }
}

#[test]
fn pipe_follows_each_message_from_its_write_to_the_read_that_takes_it() {
    require_root!();
    // 1,000 messages of 8 bytes, written in bursts of 10 before the reader
    // thread reads them: up to 10 in flight on one pipe, in its queue.
    let out = run_example("pipe.bt", "pipe-bursts 1000 10", &["-f", "json"]);
    let mut by_pid: std::collections::BTreeMap<u64, Vec<Value>> = Default::default();
    for r in json_records(&out.stdout) {
        let f = &r["fields"];
        if f["writer"] == "weftwl" && f["reader"] == "weftwl" && f["bytes"] == 8 {
            by_pid
                .entry(r["pid"].as_u64().unwrap())
                .or_default()
                .push(r);
        }
    }
    let records = by_pid
        .into_values()
        .max_by_key(Vec::len)
        .unwrap_or_else(|| panic!("no record of the workload: {}", out.stderr));
    assert_eq!(records.len(), 1000, "{}", out.stderr);
    let mut previous = 0;
    for r in &records {
        assert_eq!(r["complete"], true, "{r}");
        assert_eq!(r["fields"]["got"], 8, "{r}");
        // The reader is the other thread, which the read's entry linked.
        assert_ne!(r["fields"]["reader_tid"], r["tid"], "{r}");
        let start = r["start_ns"].as_u64().unwrap();
        assert!(start > previous, "records come in write order: {r}");
        previous = start;
    }
}

#[test]
fn http_server_parses_method_path_and_status_of_each_request() {
    require_root!();
    // 1,000 requests to python3's http.server (a thread per connection),
    // one connection each: 600 GET / (200), 200 GET /nope (404), 100 HEAD /
    // (200) and 100 POST / (501). The client prints how many of each it got.
    let server = HttpServer::start("http-server");
    let client = common::scratch("http-server-mix.py");
    std::fs::write(
        &client,
        "import collections, json, sys, urllib.request, urllib.error\n\
         port = sys.argv[1]\n\
         got = collections.Counter()\n\
         def go(method, path):\n    \
             data = b'x' if method == 'POST' else None\n    \
             req = urllib.request.Request(f'http://127.0.0.1:{port}{path}', method=method, data=data)\n    \
             try:\n        \
                 with urllib.request.urlopen(req, timeout=10) as r:\n            \
                     r.read(); status = r.status\n    \
             except urllib.error.HTTPError as e:\n        \
                 status = e.code\n    \
             got[f'{method} {path} {status}'] += 1\n\
         for i in range(1000):\n    \
             go(*[('POST', '/'), ('HEAD', '/'), ('GET', '/nope'), ('GET', '/nope')][i % 10] if i % 10 < 4 else ('GET', '/'))\n\
         print(json.dumps(got))\n",
    )
    .unwrap();
    let cmd = format!("python3 {} {}", client.display(), server.port);
    let out = run_example_with("http_server.bt", &cmd, &["-f", "json"]);
    let _ = std::fs::remove_file(&client);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let want: std::collections::BTreeMap<String, u64> = out
        .stdout
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("the client's counts: {}", out.stdout));
    assert_eq!(
        want,
        [
            ("GET / 200".to_string(), 600),
            ("GET /nope 404".to_string(), 200),
            ("HEAD / 200".to_string(), 100),
            ("POST / 501".to_string(), 100),
        ]
        .into(),
    );
    let server_pid = u64::from(server.child.id());
    let mut got = std::collections::BTreeMap::<String, u64>::new();
    for r in json_records(&out.stdout)
        .iter()
        .filter(|r| r["pid"] == server_pid)
    {
        assert_eq!(r["complete"], true, "{r}");
        let f = &r["fields"];
        let key = format!(
            "{} {} {}",
            f["method"].as_str().unwrap(),
            f["path"].as_str().unwrap(),
            f["status"]
        );
        *got.entry(key).or_default() += 1;
        // The worker thread, not the accepting one, read and answered.
        let st = r["stages"].as_array().unwrap();
        assert!(
            st[1..]
                .iter()
                .all(|s| s["tid"] != r["tid"] && s["tid"].is_u64()),
            "{r}"
        );
    }
    assert_eq!(got, want, "{}", out.stderr);
}
