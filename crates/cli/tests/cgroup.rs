//! Cgroups: `--cgroup`, `--cgroup-tree`, `cgroupid()` and `cgroup_path()`
//! on the workload. Each test makes a fresh cgroup v2 cgroup (found through
//! /proc/self/mountinfo), runs one workload inside it and one outside it
//! at the same time, and removes the cgroup at the end.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{run_weft, scratch, workload};

/// A cgroup made for one test (with the descendants it names), removed
/// when dropped.
struct TestCgroup {
    /// The cgroup's directory.
    dir: PathBuf,
    /// Its path below the cgroup v2 mount (`/weft-test-...`).
    path: String,
    /// Every directory made, deepest last.
    made: Vec<PathBuf>,
}

impl TestCgroup {
    fn new(name: &str, descendants: &[&str]) -> TestCgroup {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let mounts = ktypes::cgroup::parse_mountinfo_cgroups(&mountinfo);
        let v2 = ktypes::cgroup::cgroup2_mount(&mounts).expect("cgroup v2 is mounted");
        let path = format!("/weft-test-{}-{name}", std::process::id());
        let dir = PathBuf::from(format!("{}{path}", v2.mount_point));
        let mut made = vec![dir.clone()];
        std::fs::create_dir(&dir).unwrap();
        for d in descendants {
            let sub = dir.join(d);
            std::fs::create_dir_all(&sub).unwrap();
            let mut at = dir.clone();
            for part in d.split('/') {
                at = at.join(part);
                made.push(at.clone());
            }
        }
        TestCgroup { dir, path, made }
    }
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        // A cgroup goes once its last task is reaped, which may take a moment.
        for dir in self.made.iter().rev() {
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// A command for `-c`: starts `outside` getppid calls in the background
/// (in the shell's cgroup, weft's own), then moves the shell into `into`
/// and makes `inside` getppid calls there; ends when both are done.
fn two_workloads(into: &std::path::Path, inside: u32, outside: u32) -> String {
    let script = scratch(&format!("two-workloads-{inside}-{outside}.sh"));
    let w = workload();
    std::fs::write(
        &script,
        format!(
            "{w} getppid {outside} &\necho $$ > {procs}\n{w} getppid {inside}\nwait\n",
            w = w.display(),
            procs = into.join("cgroup.procs").display()
        ),
    )
    .unwrap();
    format!("/bin/sh {}", script.display())
}

/// Both workloads are children of the `-c` shell: other tests' workloads
/// (comm `weftwl` too) running at the same time are not counted.
const OURS: &str = r#"comm == "weftwl" && curtask->real_parent->tgid == cpid"#;

const COUNT: &str = r#"tracepoint:syscalls:sys_enter_getppid /comm == "weftwl" && curtask->real_parent->tgid == cpid/ { @ = count(); }"#;

fn run(args: &[&str]) -> String {
    let out = run_weft(args, Duration::from_secs(60));
    assert!(!out.timed_out, "weft timed out: {}", out.stderr);
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    out.stdout
}

#[test]
fn cgroup_filters_every_probe_in_the_kernel() {
    require_root!();
    let cg = TestCgroup::new("exact", &["child"]);
    let dir = cg.dir.display().to_string();
    // Without a filter both workloads count: the test can tell.
    let cmd = two_workloads(&cg.dir, 300, 1000);
    assert_eq!(run(&["-q", "-c", &cmd, "-e", COUNT]), "\n\n@: 1300\n");
    // The directory, or its path below the mount as /proc/PID/cgroup shows it.
    for name in [dir.as_str(), cg.path.as_str()] {
        let cmd = two_workloads(&cg.dir, 300, 1000);
        assert_eq!(
            run(&["-q", "--cgroup", name, "-c", &cmd, "-e", COUNT]),
            "\n\n@: 300\n",
            "--cgroup {name}"
        );
    }
    // A child cgroup is not the cgroup: nothing counted, so the map prints
    // nothing (bpftrace 0.17 printed `@: 0`).
    let cmd = two_workloads(&cg.dir.join("child"), 300, 1000);
    assert_eq!(
        run(&["-q", "--cgroup", &dir, "-c", &cmd, "-e", COUNT]),
        "\n\n"
    );
}

#[test]
fn cgroup_tree_takes_descendants() {
    require_root!();
    let cg = TestCgroup::new("tree", &["a/b"]);
    let dir = cg.dir.display().to_string();
    let cmd = two_workloads(&cg.dir.join("a/b"), 250, 1000);
    assert_eq!(
        run(&["-q", "--cgroup-tree", &dir, "-c", &cmd, "-e", COUNT]),
        "\n\n@: 250\n"
    );
    // The cgroup itself is in its tree.
    let cmd = two_workloads(&cg.dir, 40, 1000);
    assert_eq!(
        run(&["-q", "--cgroup-tree", &cg.path, "-c", &cmd, "-e", COUNT]),
        "\n\n@: 40\n"
    );
}

#[test]
fn cgroupid_in_a_predicate_and_cgroup_path_as_a_key() {
    require_root!();
    let cg = TestCgroup::new("builtins", &[]);
    let script = format!(
        r#"tracepoint:syscalls:sys_enter_getppid /{OURS} && cgroup == cgroupid("{dir}")/ {{
            @ = count();
            @paths[cgroup_path(cgroup, "unified")] = count();
            @all[cgroup_path(cgroup)] = count();
            @ids[cgroup] = count();
        }}
        tracepoint:syscalls:sys_enter_getppid /{OURS} && cgroup != cgroupid("{dir}")/ {{ @outside = count(); }}"#,
        dir = cg.dir.display()
    );
    let cmd = two_workloads(&cg.dir, 120, 1000);
    let out = run(&["-q", "-c", &cmd, "-e", &script]);
    let path = &cg.path;
    // The `cgroup` builtin as a key is the id: on cgroup v2, the inode
    // number of the cgroup's directory.
    let id = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&cg.dir).unwrap());
    // bpftrace lists each hierarchy that has a cgroup of this id: a fresh
    // v2 cgroup's id names nothing in the v1 hierarchies.
    assert_eq!(
        out,
        format!(
            "\n\n@: 120\n@all[unified:{path}]: 120\n@ids[{id}]: 120\n@outside: 1000\n@paths[unified:{path}]: 120\n"
        )
    );
    // JSON: the path as a string key.
    let out = run(&["-q", "-f", "json", "-c", &cmd, "-e", &script]);
    assert!(
        out.contains(&format!(
            r#"{{"type": "map", "data": {{"@paths": {{"unified:{path}": 120}}}}}}"#
        )),
        "{out}"
    );
}

#[test]
fn a_cgroup_that_does_not_exist_is_one_sentence() {
    // Resolving reads /proc/self/mountinfo and the directory: no root needed.
    let out = run_weft(
        &[
            "--cgroup",
            "/weft-no-such-cgroup",
            "-e",
            "tracepoint:syscalls:sys_enter_getppid { @ = count(); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr
            .starts_with("ERROR: --cgroup /weft-no-such-cgroup: no cgroup /weft-no-such-cgroup:"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn stream_records_carry_the_cgroup_path() {
    require_root!();
    let cg = TestCgroup::new("streams", &[]);
    let dir = cg.dir.display().to_string();
    let script = r#"stream ppid {
        begin tracepoint:syscalls:sys_enter_getppid /comm == "weftwl"/ by tid
        end tracepoint:syscalls:sys_exit_getppid by tid
    }"#;
    let cmd = two_workloads(&cg.dir, 3, 5);
    let text = run(&["-q", "--cgroup", &dir, "-c", &cmd, "-e", script]);
    let records: Vec<&str> = text.lines().filter(|l| l.starts_with("ppid ")).collect();
    assert_eq!(records.len(), 3, "{text}");
    for r in &records {
        assert!(
            r.contains(&format!(" comm=weftwl cgroup={} start=", cg.path)),
            "{r}"
        );
    }
    let cmd = two_workloads(&cg.dir, 2, 5);
    let timeline = scratch("cgroup-timeline.json");
    let t = timeline.display().to_string();
    let json = run(&[
        "-q",
        "-f",
        "json",
        "--timeline",
        &t,
        "--cgroup",
        &dir,
        "-c",
        &cmd,
        "-e",
        script,
    ]);
    let paths: Vec<serde_json::Value> = json
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "stream")
        .map(|v| v["data"]["cgroup_path"].clone())
        .collect();
    assert_eq!(paths, vec![serde_json::json!(cg.path); 2], "{json}");
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&timeline).unwrap()).unwrap();
    let slices: Vec<&serde_json::Value> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "stream")
        .collect();
    assert_eq!(slices.len(), 2);
    for s in slices {
        assert_eq!(s["args"]["cgroup"], cg.path.as_str());
    }
    let _ = std::fs::remove_file(timeline);
}
