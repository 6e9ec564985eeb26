//! Kernel tests of `iter:` probes (BPF iterators) on a workload process
//! that sleeps while weft walks the kernel's objects: the program runs once
//! per object, `ctx` reaches the object, and the run ends by itself when
//! every object has been visited.
//!
//! - `iter:task` visits the workload's one task once: its comm and pid.
//! - `iter:task_vma` visits each of its memory mappings: as many as
//!   /proc/PID/maps lists (less `[vsyscall]`, which is no mapping of its own).
//! - `iter:task_file` visits each open file: as many as /proc/PID/fd lists,
//!   with the descriptor numbers.
//! - `path(ctx.file->f_path)` in `iter:task_file` is each file's path, as
//!   /proc/PID/fd/N links to it (`/dev/null`, `pipe:[N]`).
//!   A struct path reached through a pointer read from memory
//!   (`ctx.vma->vm_file`), which the verifier does not trust, is refused
//!   before loading (E0345).
//! - `-l 'iter:*'` lists the kernel's targets; `-lv` their fields.
//! - An iterator beside another probe is refused (E0498).

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::run_weft;

/// The workload, asleep; killed when dropped.
struct Sleeper(Child);

impl Sleeper {
    fn start() -> Sleeper {
        let child = Command::new(common::workload())
            .args(["sleep", "60000"])
            .stdout(Stdio::null())
            .spawn()
            .expect("start the workload");
        // Its comm is set before the steps run.
        std::thread::sleep(Duration::from_millis(200));
        Sleeper(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn iterate(script: &str, pid: u32) -> common::Outcome {
    let out = run_weft(
        &["-q", "-e", script, &pid.to_string()],
        Duration::from_secs(60),
    );
    assert!(!out.timed_out, "weft did not end by itself\n{}", out.stderr);
    assert_eq!(
        out.status,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    out
}

#[test]
fn task_iterator_visits_the_workload_once() {
    require_root!();
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    let out = iterate(
        r#"iter:task /ctx.task.tgid == $1/ { printf("%s %d\n", ctx.task.comm, ctx.task.pid); }"#,
        pid,
    );
    // The line, then the blank lines that come before the maps at exit.
    assert_eq!(
        out.stdout.trim_end(),
        format!("weftwl {pid}"),
        "{}",
        out.stderr
    );
}

#[test]
fn task_vma_iterator_visits_each_mapping() {
    require_root!();
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).expect("maps");
    let want = maps.lines().filter(|l| !l.ends_with("[vsyscall]")).count();
    let first = maps.lines().next().expect("a mapping");
    let start = u64::from_str_radix(first.split('-').next().unwrap(), 16).unwrap();
    let out = iterate(
        r#"iter:task_vma /ctx.task.tgid == $1/ { @n = count(); @low = min(ctx.vma.vm_start); }"#,
        pid,
    );
    common::expect_lines(
        &out.stdout,
        &out.stderr,
        &[&format!("@n: {want}"), &format!("@low: {start}")],
    );
}

#[test]
fn task_file_iterator_visits_each_open_file() {
    require_root!();
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    let mut fds: Vec<u64> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fd dir")
        .map(|e| e.unwrap().file_name().to_string_lossy().parse().unwrap())
        .collect();
    fds.sort_unstable();
    let out = iterate(
        r#"iter:task_file /ctx.task.tgid == $1/ { @fd[ctx.fd] = count(); }"#,
        pid,
    );
    let want: Vec<String> = fds.iter().map(|fd| format!("@fd[{fd}]: 1")).collect();
    // Equal counts print in no particular key order.
    let mut got: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("@fd["))
        .collect();
    got.sort_by_key(|l| l[4..l.find(']').unwrap()].parse::<u64>().unwrap());
    assert_eq!(got, want, "stderr:\n{}", out.stderr);
}

#[test]
fn path_of_each_open_file_is_its_proc_fd_link() {
    require_root!();
    let sleeper = Sleeper::start();
    let pid = sleeper.pid();
    let mut want: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fd dir")
        .map(|e| {
            let e = e.unwrap();
            let link = std::fs::read_link(e.path()).unwrap();
            format!("{} {}", e.file_name().to_string_lossy(), link.display())
        })
        .collect();
    want.sort();
    let out = iterate(
        r#"iter:task_file /ctx.task.tgid == $1/ { printf("%d %s\n", ctx.fd, path(ctx.file->f_path)); }"#,
        pid,
    );
    let mut got: Vec<&str> = out.stdout.lines().filter(|l| !l.is_empty()).collect();
    got.sort();
    assert_eq!(got, want, "stderr:\n{}", out.stderr);
}

#[test]
fn path_through_a_pointer_read_from_memory_is_refused() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            "iter:task_vma { print(path(ctx.vma->vm_file->f_path)); }",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(1));
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.starts_with(
            "stdin:1:28-44: ERROR: path() needs a pointer the kernel's verifier trusts\n"
        ) && out.stderr.contains("CODE: E0345"),
        "stderr:\n{}",
        out.stderr
    );
}

#[test]
fn lists_targets_and_their_fields() {
    require_root!();
    let out = run_weft(&["-l", "iter:task*"], Duration::from_secs(30));
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    for want in ["iter:task", "iter:task_file", "iter:task_vma"] {
        assert!(lines.contains(&want), "no {want} in:\n{}", out.stdout);
    }
    let out = run_weft(&["-lv", "iter:task_file"], Duration::from_secs(30));
    common::expect_lines(
        &out.stdout,
        &out.stderr,
        &[
            "iter:task_file",
            "    struct task_struct * task",
            "    u32 fd",
            "    struct file * file",
        ],
    );
}

#[test]
fn an_iterator_runs_alone() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            "iter:task { } tracepoint:syscalls:sys_enter_getppid { }",
        ],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(1), "{}", out.stderr);
    assert!(out.stderr.contains("E0498"), "{}", out.stderr);
}
