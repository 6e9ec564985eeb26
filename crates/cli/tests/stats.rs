//! `--stats`: the kernel's BPF run statistics for the run, weft's own CPU
//! time and the overhead. A uprobe on the workload's marker function runs
//! for the workload alone, so its run count is exact; bpftool, run by the
//! traced command while the probe is still attached, must report the same
//! numbers for the same program.

mod common;

use std::time::Duration;

use common::{run_weft, scratch, workload};

/// A copy of the workload of this test's own: a uprobe on a file fires for
/// every process running that file, so tests running at the same time
/// each trace their own copy.
fn own_workload(name: &str) -> std::path::PathBuf {
    let path = scratch(name);
    std::fs::copy(workload(), &path).unwrap();
    path
}

/// The JSON lines of `out` of type `kind`.
fn records(out: &str, kind: &str) -> Vec<serde_json::Value> {
    out.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == kind)
        .collect()
}

fn stats_sysctl() -> String {
    std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled")
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn run_counts_are_the_workloads_calls_and_bpftool_agrees() {
    require_root!();
    let w = own_workload("stats-wl-bpftool");
    let bpftool_json = scratch("stats-bpftool.json");
    let weft_fds = scratch("stats-weft-fds.txt");
    let script = scratch("stats-run.sh");
    std::fs::write(
        &script,
        format!(
            "{w} call 500\nls -l /proc/$PPID/fd > {fds}\nbpftool prog show --json > {json}\n",
            w = w.display(),
            fds = weft_fds.display(),
            json = bpftool_json.display()
        ),
    )
    .unwrap();
    let probe = format!("uprobe:{}:weft_workload_marker", w.display());
    let cmd = format!("/bin/sh {}", script.display());
    let sysctl_before = stats_sysctl();
    let out = run_weft(
        &[
            "--stats",
            "-f",
            "json",
            "-c",
            &cmd,
            "-e",
            &format!("{probe} {{ @calls = count(); }}"),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains(r#"{"@calls": 500}"#), "{}", out.stdout);
    let stats = records(&out.stdout, "stats");
    assert_eq!(stats.len(), 1, "{}", out.stdout);
    let data = &stats[0]["data"];
    let probes = data["probes"].as_array().unwrap();
    assert_eq!(probes.len(), 1);
    let p = &probes[0];
    assert_eq!(p["probe"], probe.as_str());
    assert_eq!(p["program"], "weft_workload_marker");
    assert_eq!(p["run_count"], 500, "{p}");
    assert_eq!(p["recursion_misses"], 0);
    let run_time = p["run_time_ns"].as_u64().unwrap();
    assert!(run_time > 0);
    assert_eq!(p["mean_ns"].as_u64().unwrap(), run_time / 500);
    assert!(data["elapsed_ns"].as_u64().unwrap() > 0);
    assert!(data["overhead_percent"].as_f64().unwrap() > 0.0);

    // bpftool, asked while the probe was attached and after the workload
    // ended, saw the same program with the same counts.
    let listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&bpftool_json).unwrap()).unwrap();
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == p["id"])
        .unwrap_or_else(|| panic!("program {} not in bpftool's list", p["id"]));
    assert_eq!(entry["name"], "weft_workload_marker");
    assert_eq!(entry["run_cnt"], 500, "{entry}");
    assert_eq!(entry["run_time_ns"].as_u64(), Some(run_time), "{entry}");
    // The kernel counted because weft (the command's parent) held a
    // BPF_ENABLE_STATS descriptor: it counts only while one is open, and the
    // kernel closes weft's when weft ends, however it ends. The system-wide
    // switch is left as it was.
    let fds = std::fs::read_to_string(&weft_fds).unwrap();
    assert!(fds.contains("anon_inode:bpf-stats"), "{fds}");
    assert_eq!(stats_sysctl(), sysctl_before);
    for f in [&bpftool_json, &weft_fds, &script, &w] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn the_text_report_goes_to_stderr() {
    require_root!();
    let w = own_workload("stats-wl-text");
    let probe = format!("uprobe:{}:weft_workload_marker", w.display());
    let cmd = format!("{} call 200", w.display());
    let out = run_weft(
        &[
            "-q",
            "--stats",
            "-c",
            &cmd,
            "-e",
            &format!("{probe} {{ @ = count(); }}"),
        ],
        Duration::from_secs(60),
    );
    let _ = std::fs::remove_file(&w);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    // stdout is what bpftrace would print; the report is on stderr.
    assert_eq!(out.stdout, "\n\n@: 200\n");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines[0].starts_with("weft: --stats over "),
        "{}",
        out.stderr
    );
    let row = lines
        .iter()
        .find(|l| l.trim_start().starts_with(&probe))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    let cols: Vec<&str> = row.split_whitespace().collect();
    // probe, prog id, runs, run time (2 words), mean (2 words), recursion misses.
    assert_eq!(cols[2], "200", "{row}");
    assert_eq!(cols[7], "0", "{row}");
    assert!(
        lines.last().unwrap().contains("% of the machine's CPU"),
        "{}",
        out.stderr
    );
}

/// What `bpftool map show` prints for weft's maps says what each holds:
/// script maps as bpftrace names them (`AT_name`), weft's own by their use,
/// a stream's with their role first, all within the kernel's 15 bytes.
#[test]
fn maps_are_named_for_what_they_hold_in_bpftool() {
    require_root!();
    let ids_file = scratch("map-names-ids.txt");
    let bpftool_json = scratch("map-names-bpftool.json");
    let script = scratch("map-names.sh");
    std::fs::write(
        &script,
        format!(
            "grep -h map_id /proc/$PPID/fdinfo/* > {ids}\nbpftool map show --json > {json}\n",
            ids = ids_file.display(),
            json = bpftool_json.display()
        ),
    )
    .unwrap();
    let program = r#"tracepoint:syscalls:sys_enter_getppid { @calls[kstack] = count(); printf("%d\n", pid); }
stream reqs {
    begin tracepoint:syscalls:sys_enter_openat by tid
    stage opened tracepoint:syscalls:sys_exit_openat by tid link (uint64)args->ret as fd
    end tracepoint:syscalls:sys_enter_close by (uint64)args->fd as fd
    incomplete
}"#;
    let cmd = format!("/bin/sh {}", script.display());
    let out = run_weft(
        &["-q", "--cgroup-tree", "/", "-c", &cmd, "-e", program],
        Duration::from_secs(60),
    );
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    let ids: std::collections::BTreeSet<u64> = std::fs::read_to_string(&ids_file)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("map_id:"))
        .map(|id| id.trim().parse().unwrap())
        .collect();
    let listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&bpftool_json).unwrap()).unwrap();
    let mut names: Vec<(String, String)> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["id"].as_u64().is_some_and(|id| ids.contains(&id)))
        .map(|m| {
            (
                m["name"].as_str().unwrap_or("").to_string(),
                m["type"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    names.sort();
    let expected = [
        ("AT_calls", "percpu_hash"),
        ("cgroup_tree", "cgroup_array"),
        ("counts_reqs", "percpu_array"),
        ("event_ringbuf", "ringbuf"),
        ("link_reqs_fd", "lru_hash"),
        ("loss_counters", "percpu_array"),
        ("order_reqs", "queue"),
        ("run_globals", "array"),
        ("stacks_127", "stack_trace"),
        ("state_reqs", "hash"),
        ("zero_value", "array"),
    ];
    assert_eq!(
        names,
        expected
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect::<Vec<_>>()
    );
    for f in [&ids_file, &bpftool_json, &script] {
        let _ = std::fs::remove_file(f);
    }
}
