//! `weft agent`: two scripts in one process behind one exporter. SIGHUP
//! swaps the one whose file changed while the other keeps counting; a
//! script that no longer compiles keeps its old version running, with the
//! error logged and shown at `/healthz`. Its `[profile]` writes a pprof file
//! per interval, the newest kept. SIGTERM ends it cleanly.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{scratch, weft, workload};

/// A process killed (and reaped) when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let status = text.split(' ').nth(1)?.parse().ok()?;
    Some((status, text.split_once("\r\n\r\n")?.1.to_string()))
}

/// Waits until `/metrics` has every line of `want` (or fails the test).
fn wait_for_metrics(port: u16, want: &[&str], log: &Path) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some((200, body)) = http_get(port, "/metrics")
            && want.iter().all(|w| body.lines().any(|l| l == *w))
        {
            return body;
        }
        if Instant::now() > deadline {
            let body = http_get(port, "/metrics").map(|b| b.1).unwrap_or_default();
            let log = std::fs::read_to_string(log).unwrap_or_default();
            panic!("never saw {want:?} in /metrics:\n{body}\nagent's log:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_for_log(log: &Path, text: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = std::fs::read_to_string(log).unwrap_or_default();
        if now.contains(text) {
            return now;
        }
        assert!(Instant::now() < deadline, "never said {text:?}:\n{now}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `n` writes of 4321 bytes (a size nothing else on the machine writes).
fn writes(n: u32) {
    let out = common::run(
        Command::new(workload()).args(["write", "4321", &n.to_string()]),
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill() of a process we spawned and have not reaped.
    unsafe { libc::kill(child.id() as i32, sig) };
}

const A: &str =
    "tracepoint:syscalls:sys_enter_write /args->count == 4321/ { @a_writes = count(); }\n";
const B1: &str =
    "tracepoint:syscalls:sys_enter_write /args->count == 4321/ { @b_writes = count(); }\n";
const B2: &str =
    "tracepoint:syscalls:sys_enter_write /args->count == 4321/ { @b_new = count(); }\n";
const B3: &str = "tracepoint:syscalls:sys_enter_write /args->count == 4321/ { @b_new = count( }\n";

#[test]
fn a_reload_swaps_one_script_and_the_other_keeps_counting() {
    require_root!();
    let dir = scratch("agent");
    std::fs::create_dir_all(&dir).unwrap();
    let port = free_port();
    std::fs::write(dir.join("a.bt"), A).unwrap();
    std::fs::write(dir.join("b.bt"), B1).unwrap();
    let config = dir.join("agent.toml");
    std::fs::write(
        &config,
        format!(
            "[agent]\nprometheus = \"127.0.0.1:{port}\"\n\n[[script]]\nname = \"a\"\nfile = \"a.bt\"\n\n[[script]]\nname = \"b\"\nfile = \"b.bt\"\n\n[profile]\nfrequency = 49\ninterval = \"1s\"\noutput = \"profiles\"\nkeep = 2\n"
        ),
    )
    .unwrap();
    let log = dir.join("agent.log");
    let mut agent = Running(
        Command::new(weft())
            .arg("agent")
            .arg("--config")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("the agent starts"),
    );
    wait_for_log(&log, "b: running");
    let (status, health) = http_get(port, "/healthz").expect("/healthz answers");
    assert_eq!(status, 200, "{health}");
    assert_eq!(health, "ok\na: running\nb: running\n");

    writes(300);
    wait_for_metrics(
        port,
        &[
            "weft_a_writes_total{script=\"a\"} 300",
            "weft_b_writes_total{script=\"b\"} 300",
        ],
        &log,
    );

    // b changes: only b starts anew.
    std::fs::write(dir.join("b.bt"), B2).unwrap();
    signal(&agent.0, libc::SIGHUP);
    wait_for_log(&log, "b: reloaded");
    let body = wait_for_metrics(
        port,
        &[
            "weft_a_writes_total{script=\"a\"} 300",
            "weft_b_new_total{script=\"b\"} 0",
        ],
        &log,
    );
    assert!(!body.contains("weft_b_writes_total"), "{body}");
    assert!(
        !std::fs::read_to_string(&log)
            .unwrap()
            .contains("a: reloaded")
    );
    writes(200);
    wait_for_metrics(
        port,
        &[
            "weft_a_writes_total{script=\"a\"} 500",
            "weft_b_new_total{script=\"b\"} 200",
        ],
        &log,
    );

    // b no longer compiles: its running version stays, the error is said.
    std::fs::write(dir.join("b.bt"), B3).unwrap();
    signal(&agent.0, libc::SIGHUP);
    let said = wait_for_log(&log, "b: reload failed, the running version stays");
    assert!(said.contains("b.bt:1:"), "{said}");
    let (status, health) = http_get(port, "/healthz").unwrap();
    assert_eq!(status, 200, "{health}");
    assert!(
        health.contains("b: running; the last reload failed: "),
        "{health}"
    );
    writes(100);
    wait_for_metrics(
        port,
        &[
            "weft_a_writes_total{script=\"a\"} 600",
            "weft_b_new_total{script=\"b\"} 300",
        ],
        &log,
    );

    // The profile has written at least two intervals by now (the test took
    // seconds); the newest two are kept.
    let profiles = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir.join("profiles"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while profiles().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "{:?}\n{}",
            profiles(),
            std::fs::read_to_string(&log).unwrap()
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // SIGTERM: everything detaches and the agent exits 0.
    signal(&agent.0, libc::SIGTERM);
    let (status, timed_out) = common::wait_with_timeout(&mut agent.0, Duration::from_secs(30));
    assert!(!timed_out && status == Some(0), "{status:?}");
    let files = profiles();
    assert!((1..=2).contains(&files.len()), "{files:?}");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("profile-") && name.ends_with(".pb.gz"),
            "{name}"
        );
        let bytes = std::fs::read(f).unwrap();
        assert_eq!(
            bytes.get(..2),
            Some(&[0x1f, 0x8b][..]),
            "{name} is not gzip"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
