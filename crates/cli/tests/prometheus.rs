//! `--prometheus` against the real consumer: Debian's Prometheus (installed
//! by `scripts/setup.sh`) is started on 127.0.0.1 with a generated config,
//! scrapes weft every second while the workload makes exactly 1,000
//! getppid calls and 1,000 reads of two sizes, and its query API must give
//! back the count and every histogram bucket. `promtool check metrics`
//! must find nothing wrong with weft's exposition.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{scratch, weft, workload};
use serde_json::Value;

const SCRIPT: &str = r#"
// weft:metric @calls help="getppid calls of the workload"
// weft:metric @sizes name=read_sizes unit=bytes
tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @calls[comm] = count(); }
tracepoint:syscalls:sys_exit_read /pid == cpid && (args->ret == 100 || args->ret == 3000)/ {
    @sizes = hist(args->ret);
    @steps[args->ret] = lhist(args->ret, 0, 4000, 1000);
}
"#;

/// A process killed (and reaped) when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `GET path` from 127.0.0.1:port: the status and the body.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let status = text.split(' ').nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n")?.1.to_string();
    Some((status, body))
}

fn find_tool(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/usr/local/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
}

/// Prometheus's instant query: `{labels} -> value` for each series.
fn query(port: u16, expr: &str) -> Vec<(serde_json::Map<String, Value>, String)> {
    let encoded: String = expr
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let Some((200, body)) = http_get(port, &format!("/api/v1/query?query={encoded}")) else {
        return Vec::new();
    };
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    v["data"]["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["metric"].as_object().cloned().unwrap_or_default(),
                r["value"][1].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Waits until `expr` gives exactly one series of value `want` (or the time is up).
fn wait_for(
    port: u16,
    expr: &str,
    want: &str,
    deadline: Instant,
) -> Vec<(serde_json::Map<String, Value>, String)> {
    loop {
        let got = query(port, expr);
        if got.len() == 1 && got[0].1 == want || Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn prometheus_scrapes_exact_counts_and_buckets() {
    require_root!();
    let prometheus = find_tool("prometheus");
    let promtool = find_tool("promtool");
    testgate::require!(
        prometheus.is_some() && promtool.is_some(),
        "Prometheus is not installed (scripts/setup.sh installs Debian's prometheus)"
    );
    let (prometheus, promtool) = (prometheus.unwrap(), promtool.unwrap());
    let weft_port = free_port();
    let prom_port = free_port();
    let dir = scratch("prometheus");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: weft\n    static_configs:\n      - targets: ['127.0.0.1:{weft_port}']\n"
        ),
    )
    .unwrap();

    // The workload makes its calls, then blocks until weft ends it.
    let steps = format!(
        "{} getppid 1000 read 100 600 read 3000 400 block-read",
        workload().display()
    );
    let address = format!("127.0.0.1:{weft_port}");
    let weft_run = Running(
        Command::new(weft())
            .args(["-q", "--prometheus", &address, "-c", &steps, "-e", SCRIPT])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("weft runs"),
    );
    let _prom = Running(
        Command::new(&prometheus)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
            .arg("--log.level=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus runs"),
    );
    let deadline = Instant::now() + Duration::from_secs(60);

    // weft's own exposition passes promtool's checks.
    let exposition = loop {
        match http_get(weft_port, "/metrics") {
            Some((200, body)) if body.contains("weft_calls_total{comm=\"weftwl\"} 1000") => {
                break body;
            }
            _ if Instant::now() > deadline => panic!("weft never served the 1000 calls"),
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    };
    let mut check = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs");
    check
        .stdin
        .take()
        .unwrap()
        .write_all(exposition.as_bytes())
        .unwrap();
    let (status, timed_out) = common::wait_with_timeout(&mut check, Duration::from_secs(30));
    let mut problems = String::new();
    check
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut problems)
        .unwrap();
    check
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut problems)
        .unwrap();
    assert!(
        !timed_out && status == Some(0),
        "promtool check metrics:\n{problems}\n{exposition}"
    );
    assert!(
        problems.trim().is_empty(),
        "promtool check metrics:\n{problems}"
    );

    // What Prometheus stored from its own scrapes.
    let calls = wait_for(prom_port, "weft_calls_total", "1000", deadline);
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].0["comm"], "weftwl");
    assert_eq!(calls[0].0["job"], "weft");
    let count = wait_for(prom_port, "weft_read_sizes_bytes_count", "1000", deadline);
    assert_eq!(count.len(), 1, "{count:?}");
    // hist(): 600 reads of 100 bytes in [64, 128), 400 of 3000 in [2048, 4096).
    let mut buckets: Vec<(String, String)> = query(prom_port, "weft_read_sizes_bytes_bucket")
        .into_iter()
        .map(|(m, v)| (m["le"].as_str().unwrap_or("").to_string(), v))
        .collect();
    buckets.sort_by(|a, b| {
        let f = |s: &str| s.parse::<f64>().unwrap_or(f64::INFINITY);
        f(&a.0).total_cmp(&f(&b.0))
    });
    let want: Vec<(String, String)> = [
        ("127", "600"),
        ("255", "600"),
        ("511", "600"),
        ("1023", "600"),
        ("2047", "600"),
        ("4095", "1000"),
        ("+Inf", "1000"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(buckets, want);
    // lhist(), one series per size: [0, 1000) holds 100, [3000, 4000) holds 3000.
    let mut steps: Vec<(String, String, String)> = query(prom_port, "weft_steps_bucket")
        .into_iter()
        .map(|(m, v)| {
            (
                m["ret"].as_str().unwrap_or("").to_string(),
                m["le"].as_str().unwrap_or("").to_string(),
                v,
            )
        })
        .collect();
    steps.sort();
    let want: Vec<(String, String, String)> = [
        ("100", "+Inf", "600"),
        ("100", "1999", "600"),
        ("100", "2999", "600"),
        ("100", "3999", "600"),
        ("100", "999", "600"),
        ("3000", "+Inf", "400"),
        ("3000", "1999", "0"),
        ("3000", "2999", "0"),
        ("3000", "3999", "400"),
        ("3000", "999", "0"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(steps, want);
    // weft's own counters came through too.
    let lost = query(prom_port, "weft_events_lost_total");
    assert_eq!(lost.len(), 1, "{lost:?}");
    assert_eq!(lost[0].1, "0");

    // SIGINT: weft prints its maps as usual and exits cleanly.
    let mut weft_run = weft_run;
    // SAFETY: kill() of a process we spawned and have not reaped.
    unsafe { libc::kill(weft_run.0.id() as i32, libc::SIGINT) };
    let (status, timed_out) = common::wait_with_timeout(&mut weft_run.0, Duration::from_secs(30));
    let mut stdout = String::new();
    weft_run
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(
        !timed_out && status == Some(0),
        "weft: {status:?}\n{stdout}"
    );
    assert!(stdout.contains("@calls[weftwl]: 1000"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
