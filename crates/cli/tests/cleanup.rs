//! Nothing of weft's stays in the kernel after it exits, however it exits:
//! SIGINT, SIGTERM, SIGKILL, a panic (the `WEFT_TEST_PANIC=attached` test
//! hook), or a `-c` command that crashes. While weft runs, the test reads
//! which programs, maps, links and perf events it holds (its descriptors'
//! `/proc/PID/fdinfo`); after it is gone, none of them may be left
//! (`bpftool prog/map/link show id N` fails), and no kprobe or uprobe event
//! of weft's is left in tracefs.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{scratch, wait_with_timeout, weft, workload};

/// The BPF objects and perf events a process holds, by kernel id.
#[derive(Debug, Default)]
struct Held {
    programs: BTreeSet<u64>,
    maps: BTreeSet<u64>,
    links: BTreeSet<u64>,
    perf_events: usize,
}

fn held_by(pid: u32) -> Held {
    let mut held = Held::default();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return held;
    };
    for fd in fds.flatten() {
        let target = std::fs::read_link(fd.path()).unwrap_or_default();
        let target = target.to_string_lossy();
        if target.contains("perf_event") {
            held.perf_events += 1;
        }
        let name = fd.file_name();
        let Ok(info) =
            std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", name.to_string_lossy()))
        else {
            continue;
        };
        for line in info.lines() {
            let mut parts = line.split_whitespace();
            let (Some(key), Some(value)) = (parts.next(), parts.next()) else {
                continue;
            };
            let Ok(id) = value.parse::<u64>() else {
                continue;
            };
            match key {
                "prog_id:" => {
                    held.programs.insert(id);
                }
                "map_id:" => {
                    held.maps.insert(id);
                }
                "link_id:" => {
                    held.links.insert(id);
                }
                _ => {}
            }
        }
    }
    held
}

/// Whether bpftool still finds `kind` (`prog`, `map`, `link`) `id`.
fn exists(kind: &str, id: u64) -> bool {
    Command::new("bpftool")
        .args([kind, "show", "id", &id.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Waits (the kernel frees a dead process's objects shortly after) until
/// none of `held` exists; panics naming what stayed.
fn assert_all_gone(held: &Held, how: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<String> = [
            ("prog", &held.programs),
            ("map", &held.maps),
            ("link", &held.links),
        ]
        .iter()
        .flat_map(|(kind, ids)| {
            ids.iter()
                .filter(|id| exists(kind, **id))
                .map(move |id| format!("{kind} {id}"))
        })
        .collect();
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "after {how}, still in the kernel: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// kprobe and uprobe events in tracefs (libbpf names its own after the
/// pid), read as weft reads tracefs (a mount of this process's own where
/// the system has none); a kernel without kprobes has no `kprobe_events`.
fn probe_events() -> String {
    let tracefs = runtime::tracefs::Tracefs::shared().expect("tracefs");
    ["kprobe_events", "uprobe_events"]
        .iter()
        .map(|f| tracefs.root().join(f))
        .filter(|path| path.exists())
        .map(|path| std::fs::read_to_string(&path).expect("a probe events file"))
        .collect()
}

/// Starts weft on a script with a tracepoint, a uprobe (on a private copy
/// of the workload), a profile probe and a stream; waits until it is
/// attached and what it holds can be read.
fn start(extra_env: &[(&str, &str)], args: &[&str]) -> (Child, Held) {
    // Copied once for the tests running at once: a test that found the
    // file while another was still writing it read a cut ELF (E0441).
    static COPY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let copy = COPY.get_or_init(|| {
        let copy = scratch("cleanup-workload");
        std::fs::copy(workload(), &copy).unwrap();
        copy
    });
    let script = format!(
        r#"tracepoint:syscalls:sys_enter_getppid {{ @calls = count(); }}
uprobe:{}:weft_workload_marker {{ @marks = count(); }}
profile:hz:49 {{ @samples = count(); }}
stream reads {{
    begin tracepoint:syscalls:sys_enter_read by tid {{ $fd = args->fd; }}
    end tracepoint:syscalls:sys_exit_read by tid
}}"#,
        copy.display()
    );
    let mut cmd = Command::new(weft());
    cmd.args(args)
        .args(["-e", &script])
        .env("__BPFTRACE_NOTIFY_PROBES_ATTACHED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    // Attached once weft says so on stdout (where bpftrace says it).
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 1024];
        let mut told = false;
        while let Ok(n) = std::io::Read::read(&mut stdout, &mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
            if !told && String::from_utf8_lossy(&all).contains("__BPFTRACE_NOTIFY_PROBES_ATTACHED")
            {
                told = true;
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("weft attached its probes");
    let held = held_by(child.id());
    assert_eq!(held.programs.len(), 5, "{held:?}");
    assert!(held.maps.len() >= 6, "{held:?}");
    assert!(held.perf_events >= 1 || !held.links.is_empty(), "{held:?}");
    (child, held)
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill with a pid we spawned and a valid signal.
    unsafe { libc::kill(child.id() as i32, sig) };
}

#[test]
fn sigint_sigterm_and_sigkill_leave_nothing() {
    require_root!();
    let before = probe_events();
    for (sig, how) in [
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGKILL, "SIGKILL"),
    ] {
        let (mut child, held) = start(&[], &["-q"]);
        signal(&child, sig);
        let (status, timed_out) = wait_with_timeout(&mut child, Duration::from_secs(30));
        assert!(!timed_out, "{how}");
        if sig == libc::SIGKILL {
            assert_eq!(status, None, "{how}");
        } else {
            assert_eq!(status, Some(0), "{how}");
        }
        assert_all_gone(&held, how);
        assert_eq!(probe_events(), before, "{how}: tracefs probe events");
    }
}

#[test]
fn a_panic_leaves_nothing() {
    require_root!();
    let (mut child, held) = start(&[("WEFT_TEST_PANIC", "attached")], &["-q"]);
    let (status, timed_out) = wait_with_timeout(&mut child, Duration::from_secs(30));
    assert!(!timed_out);
    assert_eq!(status, Some(101), "a panic exits with 101");
    assert_all_gone(&held, "a panic");
}

#[test]
fn a_crashing_command_leaves_nothing() {
    require_root!();
    let script = scratch("cleanup-crash.sh");
    // Waits until weft holds its probes, then dies of SIGSEGV.
    std::fs::write(&script, "sleep 1\nkill -SEGV $$\n").unwrap();
    let cmd = format!("/bin/sh {}", script.display());
    let (mut child, held) = start(&[], &["-q", "-c", &cmd]);
    let (status, timed_out) = wait_with_timeout(&mut child, Duration::from_secs(30));
    assert!(!timed_out);
    assert_eq!(status, Some(0));
    assert_all_gone(&held, "the command's crash");
    let _ = std::fs::remove_file(script);
}

#[test]
fn tracefs_is_left_as_found() {
    require_root!();
    // In a mount namespace where tracefs is not mounted, weft reads
    // tracepoints through a detached mount of its own: no mount table shows
    // tracefs while it runs (weft's own included) nor after, even when weft
    // was killed.
    let outside = std::fs::read_to_string("/proc/self/mounts").unwrap();
    for how in ["exit", "kill"] {
        let body = match how {
            "exit" => format!(
                "{} -q -e 'tracepoint:syscalls:sys_enter_getppid {{ @ = count(); }} interval:ms:300 {{ exit(); }}' > /dev/null; echo rc=$?",
                weft().display()
            ),
            // Still running (attached) when killed: 137.
            _ => format!(
                "{} -q -e 'tracepoint:syscalls:sys_enter_getppid {{ @ = count(); }}' > /dev/null & pid=$!; sleep 3; grep -c tracefs /proc/$pid/mounts; kill -9 $pid; wait $pid; echo rc=$?",
                weft().display()
            ),
        };
        let script = format!(
            "umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null; umount /sys/kernel/debug 2>/dev/null\n\
             grep -c tracefs /proc/self/mounts\n{body}\ngrep -c tracefs /proc/self/mounts\n"
        );
        let out = common::run(
            Command::new("unshare").args(["-m", "--propagation", "private", "sh", "-c", &script]),
            Duration::from_secs(60),
        );
        // The kill case also counts weft's own mount table while it runs.
        let rc = if how == "exit" { "rc=0" } else { "0\nrc=137" };
        assert_eq!(out.stdout, format!("0\n{rc}\n0\n"), "{how}: {}", out.stderr);
    }
    // And nothing changed outside.
    let after = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert_eq!(
        outside.matches("tracefs").count(),
        after.matches("tracefs").count()
    );
}
