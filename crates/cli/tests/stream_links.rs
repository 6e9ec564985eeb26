//! Free linking in the kernel: keys of one type in different slots stay
//! apart under concurrent threads, a key reused after its instance ended
//! never joins an old one, an instance's links go when it ends, and a stage
//! that fires several times keeps its first and last hits.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{scratch, stage, stream_records, trace_workload, weft, workload};
use serde_json::Value;

#[test]
fn two_links_of_the_begin_keys_type_keep_four_threads_apart() {
    require_root!();
    // tid → the read buffer → the file descriptor: three u64 keys, each in
    // a slot (and a map) of its own, while four threads run the chain at once.
    let path = scratch("thread-chain");
    let p = path.display().to_string();
    // The worker threads' opens begin instances (the main thread only
    // creates the file). A descriptor is a key of its process only: the
    // stages after it check the pid (another process's close of the same
    // number must change nothing).
    let script = format!(
        r#"stream chain {{
    begin opened tracepoint:syscalls:sys_enter_openat /pid == cpid && tid != pid && str(args->filename) == "{p}"/ by tid {{ $t0 = tid; }}
    stage read tracepoint:syscalls:sys_enter_read by tid link (uint64)args->buf as buf link (uint64)args->fd as fd {{ $t1 = tid; }}
    stage copied tracepoint:syscalls:sys_enter_write /pid == cpid/ by (uint64)args->buf as buf {{ $t2 = tid; }}
    end closed tracepoint:syscalls:sys_enter_close /pid == cpid/ by (uint64)args->fd as fd {{ $t3 = tid; }}
}}"#
    );
    let out = trace_workload(&script, &format!("thread-chain 4 50 {p}"), &["-f", "json"]);
    let _ = std::fs::remove_file(&path);
    let records = stream_records(&out.stdout);
    assert_eq!(records.len(), 200, "{}\n{}", out.stdout, out.stderr);
    let mut per_thread = std::collections::BTreeMap::new();
    for r in &records {
        assert_eq!(r["complete"], true, "{r}");
        let tid = &r["tid"];
        for f in ["t0", "t1", "t2", "t3"] {
            assert_eq!(&r["fields"][f], tid, "{f} of {r}");
        }
        let ts: Vec<u64> = ["opened", "read", "copied", "closed"]
            .iter()
            .map(|s| {
                assert_eq!(stage(r, s)["hits"], 1, "{s}: {r}");
                stage(r, s)["ts_ns"].as_u64().unwrap()
            })
            .collect();
        assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{r}");
        *per_thread.entry(tid.as_u64().unwrap()).or_insert(0) += 1;
    }
    assert_eq!(per_thread.len(), 4, "{per_thread:?}");
    assert!(per_thread.values().all(|&n| n == 50), "{per_thread:?}");
    assert!(!out.stderr.contains("weft: stream"), "{}", out.stderr);
}

const FD_CHAIN: &str = r#"stream fdc {
    begin tracepoint:syscalls:sys_enter_getppid /pid == cpid/ by tid
    stage opened tracepoint:syscalls:sys_exit_openat /args->ret >= 0/ by tid link (uint64)args->ret as fd
    stage read tracepoint:syscalls:sys_enter_read /pid == cpid/ by (uint64)args->fd as fd
    end closed tracepoint:syscalls:sys_enter_close /pid == cpid/ by (uint64)args->fd as fd
}"#;

#[test]
fn a_key_reused_after_its_instance_ended_never_joins_an_old_one() {
    require_root!();
    // Each round reuses the descriptor the last one closed, and reads it
    // once while it is closed, before the round's openat links it again:
    // that read must not count for anything.
    let path = scratch("fd-chain");
    let p = path.display().to_string();
    let out = trace_workload(FD_CHAIN, &format!("fd-chain {p} 30"), &["-f", "json"]);
    let _ = std::fs::remove_file(&path);
    let records = stream_records(&out.stdout);
    assert_eq!(records.len(), 30, "{}", out.stdout);
    for r in &records {
        assert_eq!(r["complete"], true, "{r}");
        assert_eq!(stage(r, "opened")["hits"], 1, "{r}");
        assert_eq!(stage(r, "read")["hits"], 1, "{r}");
        assert!(
            stage(r, "read")["ts_ns"].as_u64() > stage(r, "opened")["ts_ns"].as_u64(),
            "{r}"
        );
    }
}

#[test]
fn an_instance_takes_its_links_with_it_when_it_ends() {
    require_root!();
    // While the workload sleeps after 20 rounds, the link map is empty:
    // every end removed the descriptor it had been found by.
    let path = scratch("fd-chain-links");
    let p = path.display().to_string();
    let cmd = format!("{} fd-chain {p} 20 sleep 3000", workload().display());
    let mut child = Command::new(weft())
        .args(["-q", "-f", "json", "-c", &cmd, "-e", FD_CHAIN])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn weft");
    let stdout = child.stdout.take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut records = 0;
    while records < 20 && Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) {
            records += usize::from(line.starts_with("{\"type\": \"stream\""));
        }
    }
    let dump = Command::new("bpftool")
        .args(["-j", "map", "dump", "name", "link_fdc_fd"])
        .output()
        .expect("bpftool (scripts/setup.sh installs it)");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_file(&path);
    assert_eq!(records, 20, "records seen before the workload slept");
    let text = String::from_utf8_lossy(&dump.stdout);
    let entries: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(entries, serde_json::json!([]), "links left behind: {text}");
}

#[test]
fn a_stage_keeps_its_first_and_last_hits_or_only_its_last() {
    require_root!();
    let script = r#"stream hits {
    begin tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ by tid
    stage asked tracepoint:syscalls:sys_enter_getppid by tid
    stage answered tracepoint:syscalls:sys_exit_getppid by tid keep last
    end tracepoint:syscalls:sys_enter_write by tid
}"#;
    let steps = "nanosleep 1000 1 getppid 3 write 1 1";
    let out = trace_workload(script, steps, &["-f", "json"]);
    let records = stream_records(&out.stdout);
    assert_eq!(records.len(), 1, "{}", out.stdout);
    let r = &records[0];
    let (asked, answered) = (stage(r, "asked"), stage(r, "answered"));
    assert_eq!(asked["hits"], 3, "{r}");
    assert_eq!(answered["hits"], 3, "{r}");
    let t = |s: &Value, k: &str| s[k].as_u64().unwrap();
    // The first getppid's entry, its third one's entry; the third's exit only.
    assert!(t(asked, "last_ns") > t(asked, "ts_ns"), "{r}");
    assert_eq!(t(answered, "ts_ns"), t(answered, "last_ns"), "{r}");
    assert!(t(answered, "ts_ns") > t(asked, "last_ns"), "{r}");
    let out = trace_workload(script, steps, &[]);
    let line = out.stdout.lines().find(|l| l.starts_with("hits ")).unwrap();
    assert!(line.contains(" asked +"), "{line}");
    assert!(line.contains(" x3 (last +"), "{line}");
    // A kept-last stage shows its hits, but no span from first to last.
    assert!(
        line.contains(" answered +") && line.matches("(last +").count() == 1,
        "{line}"
    );
}

#[test]
fn a_stage_predicate_may_read_the_instances_fields() {
    require_root!();
    // `/$fd == N/` runs on the instance found; `/comm == .../` (no field)
    // runs before any lookup. Both decide whether the end matches.
    let script = |fd: u32| {
        format!(
            r#"stream rr {{
    begin tracepoint:syscalls:sys_enter_read /pid == cpid/ by tid {{ $fd = args->fd; }}
    end tracepoint:syscalls:sys_exit_read /$fd == {fd} && comm == "weftwl"/ by tid
}}"#
        )
    };
    let records = |out: &common::Outcome| {
        stream_records(&out.stdout)
            .into_iter()
            .filter(|r| r["comm"] == "weftwl")
            .count()
    };
    // /dev/zero is the workload's descriptor 3.
    let out = trace_workload(&script(3), "read 16 4", &["-f", "json"]);
    assert_eq!(records(&out), 4, "{}", out.stdout);
    let out = trace_workload(&script(4), "read 16 4", &["-f", "json"]);
    assert_eq!(records(&out), 0, "{}", out.stdout);
}
