//! Stream records on the running kernel: one line (or JSON object) per
//! instance, the `--timeline` file, the user-space sweep of timed-out
//! instances and the exit report of everything lost or left.

mod common;

use common::{scratch, trace_workload};

const READ_REQ: &str = r#"stream read_req {
    begin tracepoint:syscalls:sys_enter_read /pid == cpid && comm == "weftwl"/ by tid { $fd = args->fd; }
    end   tracepoint:syscalls:sys_exit_read by tid { $bytes = args->ret; }
    timeout 5s
}"#;

#[test]
fn one_text_line_per_read_and_a_timeline() {
    require_root!();
    let timeline = scratch("timeline.json");
    let t = timeline.display().to_string();
    let out = trace_workload(READ_REQ, "read 4096 5", &["--timeline", &t]);
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("read_req "))
        .collect();
    assert_eq!(lines.len(), 5, "{}", out.stdout);
    for line in &lines {
        assert!(line.contains(" comm=weftwl "), "{line}");
        assert!(line.contains(" dur="), "{line}");
        assert!(
            line.contains("[sys_enter_read +0 > sys_exit_read +"),
            "{line}"
        );
        assert!(line.contains(" bytes=4096"), "{line}");
    }
    // Nothing lost, nothing left: no report.
    assert!(!out.stderr.contains("weft: stream"), "{}", out.stderr);
    let text = std::fs::read_to_string(&timeline).expect("timeline written");
    let _ = std::fs::remove_file(&timeline);
    assert!(text.starts_with("{\"traceEvents\": ["), "{text}");
    assert!(text.ends_with("\"displayTimeUnit\": \"ns\"}\n"), "{text}");
    // 5 instances, each with one stage interval.
    assert_eq!(
        text.matches("\"ph\": \"X\", \"name\": \"read_req\"")
            .count(),
        5
    );
    assert_eq!(
        text.matches("\"sys_enter_read → sys_exit_read\"").count(),
        5
    );
    assert!(text.contains("\"name\": \"thread_name\""), "{text}");
}

#[test]
fn json_objects_per_read() {
    require_root!();
    let out = trace_workload(READ_REQ, "read 512 3", &["-f", "json"]);
    let records: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("{\"type\": \"stream\""))
        .collect();
    assert_eq!(records.len(), 3, "{}", out.stdout);
    for r in &records {
        assert!(
            r.contains("\"stream\": \"read_req\", \"complete\": true"),
            "{r}"
        );
        assert!(r.contains("\"bytes\": 512"), "{r}");
    }
}

#[test]
fn timed_out_replaced_and_open_instances_are_reported() {
    require_root!();
    // A getppid begins an instance that the next openat ends. The first one
    // outlives its 1 s timeout (the sweep expires it), the next two share a
    // key (the second replaces the first), the last one is open at exit.
    // `incomplete` emits every instance that did not end: 4 records.
    let script = r#"stream ppid {
    begin tracepoint:syscalls:sys_enter_getppid /pid == cpid/ by tid { $n = @n++; }
    end   tracepoint:syscalls:sys_enter_openat by tid { $path = str(args->filename); }
    timeout 1s
    incomplete
}"#;
    let path = scratch("stream-open");
    let steps = format!(
        "getppid 1 sleep 2600 getppid 2 openat {} 1 getppid 1",
        path.display()
    );
    let out = trace_workload(script, &steps, &[]);
    let _ = std::fs::remove_file(&path);
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("ppid "))
        .collect();
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    // Timed out, replaced, ended, open at exit: in that order, each with its own `$n`.
    assert!(
        lines[0].contains(" incomplete [") && lines[0].ends_with(" n=0 path=\"\""),
        "{}",
        out.stdout
    );
    assert!(
        lines[1].contains(" incomplete [") && lines[1].ends_with(" n=1 path=\"\""),
        "{}",
        out.stdout
    );
    assert!(lines[2].contains(" dur="), "{}", out.stdout);
    assert!(
        lines[2].contains(&format!(" n=2 path={}", path.display())),
        "{}",
        out.stdout
    );
    assert!(
        lines[3].contains(" incomplete [") && lines[3].ends_with(" n=3 path=\"\""),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("weft: stream ppid: 1 timed out, 1 replaced, 1 still open at exit\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn incomplete_emits_the_instances_the_map_limit_evicts() {
    require_root!();
    // `max 1` and two overlapping instances under different keys: the second
    // evicts the first, which comes out as an incomplete record at once; the
    // second is open at exit. Then three more: each evicts the one before.
    let script = r#"stream ev {
    begin tracepoint:syscalls:sys_enter_getppid /pid == cpid/ by nsecs { $n = @n++; }
    end   tracepoint:syscalls:sys_enter_openat by nsecs { $x = 2; }
    max 1
    incomplete
}"#;
    let out = trace_workload(script, "getppid 5", &[]);
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("ev "))
        .collect();
    assert_eq!(lines.len(), 5, "{}", out.stdout);
    for (i, line) in lines.iter().enumerate() {
        assert!(line.contains(" incomplete ["), "{line}");
        assert!(line.ends_with(&format!(" n={i} x=0")), "{}", out.stdout);
    }
    assert!(
        out.stderr.contains(
            "weft: stream ev: 4 evicted by the map limit (max 1), 1 still open at exit\n"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn lru_evictions_are_counted_not_lost() {
    require_root!();
    // Every instance has a key of its own and none ends: past `max 2` the
    // LRU state map evicts silently, and the exit report accounts for all 50.
    let script = r#"stream ev {
    begin tracepoint:syscalls:sys_enter_getppid /pid == cpid/ by nsecs { $n = 1; }
    end   tracepoint:syscalls:sys_enter_openat by nsecs { $x = 2; }
    max 2
}"#;
    let out = trace_workload(script, "getppid 50", &[]);
    let line = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("weft: stream ev: "))
        .unwrap_or_else(|| panic!("no report:\n{}", out.stderr));
    let count = |what: &str| -> u64 {
        line.split(", ")
            .find_map(|part| part.strip_suffix(what))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let evicted = count(" evicted by the map limit (max 2)");
    let open = count(" still open at exit");
    assert!(evicted > 0, "{line}");
    assert_eq!(evicted + open, 50, "{line}");
}

#[test]
fn a_timeline_of_a_stream_whose_handler_never_emits_is_warned_about() {
    require_root!();
    let timeline = scratch("silent-timeline.json");
    let t = timeline.display().to_string();
    let script = r#"stream rr {
    begin tracepoint:syscalls:sys_enter_read /pid == cpid/ by tid
    end   tracepoint:syscalls:sys_exit_read by tid
}
stream:rr { @n = count(); }"#;
    let out = trace_workload(script, "read 16 3", &["--timeline", &t]);
    let _ = std::fs::remove_file(&timeline);
    assert!(
        out.stderr.contains(&format!(
            "WARNING: --timeline {t}: the handler of stream rr never calls emit(), so its records do not reach the timeline\n"
        )),
        "{}",
        out.stderr
    );
    // With emit(), no warning.
    let script = script.replace("@n = count();", "@n = count(); emit();");
    let out = trace_workload(&script, "read 16 3", &["--timeline", &t]);
    let _ = std::fs::remove_file(&timeline);
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
}
