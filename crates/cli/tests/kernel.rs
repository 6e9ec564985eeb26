//! Kernel tests: weft traces the workload (`-c`, filtered by `cpid`) and the
//! output must match exactly what bpftrace prints for the same workload.
//! Expected texts were captured from bpftrace 0.17 on this machine.

mod common;

use std::time::Duration;

use common::{run_weft, scratch, trace_workload, workload};

#[test]
fn counts_exact_getppid_calls() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @ = count(); }",
        "getppid 1234",
        &[],
    );
    assert_eq!(out.stdout, "\n\n@: 1234\n");
}

#[test]
fn aggregations_over_write_sizes_match_bpftrace() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_write /pid == cpid/ { @ = hist(args->count); @l = lhist(args->count, 0, 2000, 500); @s = stats(args->count); @sum = sum(args->count); @mn = min(args->count); @mx = max(args->count); @a = avg(args->count); @c[comm] = count(); }";
    let out = trace_workload(script, "write 100 10 write 1000 5", &[]);
    let expected = "\n\n@:\n\
[64, 128)             10 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\
[128, 256)             0 |                                                    |\n\
[256, 512)             0 |                                                    |\n\
[512, 1K)              5 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n\
\n\
@a: 400\n\
@c[weftwl]: 15\n\
@l:\n\
[0, 500)              10 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\
[500, 1000)            0 |                                                    |\n\
[1000, 1500)           5 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n\
\n\
@mn: 100\n\
@mx: 1000\n\
@s: { .count = 15, .average = 400, .total = 6000 }\n\
@sum: 6000\n";
    assert_eq!(out.stdout, expected);
}

#[test]
fn opens_of_a_named_file_by_string_key_and_printf() {
    require_root!();
    let path = scratch("opened");
    let p = path.display().to_string();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_openat /pid == cpid/ { @[str(args->filename)] = count(); printf(\"%s opened %s\\n\", comm, str(args->filename)); }",
        &format!("openat {p} 7"),
        &[],
    );
    let opened: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.ends_with(&format!(" opened {p}")))
        .collect();
    assert_eq!(opened.len(), 7, "{}", out.stdout);
    assert!(opened.iter().all(|l| *l == format!("weftwl opened {p}")));
    assert!(
        out.stdout.contains(&format!("\n@[{p}]: 7\n")),
        "{}",
        out.stdout
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn enter_exit_latency_pattern_keyed_by_tid() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { @start[tid] = nsecs; }
tracepoint:syscalls:sys_exit_nanosleep /@start[tid]/ { @us = hist((nsecs - @start[tid]) / 1000); @n = count(); delete(@start[tid]); }";
    let out = trace_workload(script, "nanosleep 3000000 20", &[]);
    // 20 sleeps of 3 ms: every latency lands in [2K, 4K) or above, never below.
    let counts: u64 = out
        .stdout
        .lines()
        .filter(|l| l.starts_with('['))
        .map(|l| {
            l.split('|')
                .next()
                .unwrap()
                .split_whitespace()
                .last()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(counts, 20, "{}", out.stdout);
    assert!(out.stdout.contains("@n: 20\n"), "{}", out.stdout);
    assert!(
        !out.stdout
            .lines()
            .any(|l| l.starts_with("[1K, 2K)") || l.starts_with("[512")),
        "{}",
        out.stdout
    );
    // Every start was deleted: @start prints empty.
    assert!(
        out.stdout.contains("@start: \n") || !out.stdout.contains("@start["),
        "{}",
        out.stdout
    );
}

#[test]
fn raw_syscalls_by_syscall_number_and_comm() {
    require_root!();
    // getppid is syscall 110 on x86_64.
    let out = trace_workload(
        "tracepoint:raw_syscalls:sys_enter /pid == cpid && args->id == 110/ { @[comm] = count(); @ids[args->id] = count(); }",
        "getppid 321",
        &[],
    );
    assert_eq!(out.stdout, "\n\n@[weftwl]: 321\n@ids[110]: 321\n");
}

#[test]
fn json_output_has_bpftrace_record_shapes() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @c = count(); printf(\"x%d\\n\", 5); }",
        "getppid 3",
        &["-f", "json"],
    );
    let printfs = out
        .stdout
        .lines()
        .filter(|l| *l == r#"{"type": "printf", "data": "x5\n"}"#)
        .count();
    assert_eq!(printfs, 3, "{}", out.stdout);
    assert!(
        out.stdout
            .lines()
            .any(|l| l == r#"{"type": "map", "data": {"@c": 3}}"#),
        "{}",
        out.stdout
    );
}

/// Pointer map keys and values print in hex as bpftrace prints them
/// (`args->filename` and `curtask`; bpftrace 0.17 printed pointer values as
/// signed 64-bit numbers); JSON gives pointer values as numbers.
#[test]
fn pointer_keys_print_in_hex() {
    require_root!();
    let path = scratch("pointer-keys");
    let p = path.display().to_string();
    let script = format!(
        "tracepoint:syscalls:sys_enter_openat /pid == cpid && str(args->filename) == \"{p}\"/ {{ @k[args->filename] = count(); @t[curtask, 1] = count(); @v = args->filename; @c = curtask; }}"
    );
    let hex = |text: &str| {
        text.strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let out = trace_workload(&script, &format!("openat {p} 3"), &[]);
    let line = |prefix: &str| {
        out.stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in\n{}", out.stdout))
            .to_string()
    };
    let k = line("@k[");
    let (key, count) = k.split_once("]: ").unwrap();
    assert!(hex(key) && count == "3", "{}", out.stdout);
    let t = line("@t[");
    let (key, count) = t.split_once("]: ").unwrap();
    let (task, one) = key.split_once(", ").unwrap();
    // A kernel address, in hex.
    assert!(
        hex(task) && task.starts_with("0xffff") && one == "1",
        "{}",
        out.stdout
    );
    assert_eq!(count, "3", "{}", out.stdout);
    // Values: the user and kernel addresses, in hex.
    assert!(hex(&line("@v: ")), "{}", out.stdout);
    assert!(line("@c: ").starts_with("0xffff"), "{}", out.stdout);
    let json = trace_workload(&script, &format!("openat {p} 3"), &["-f", "json"]);
    let k = json
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(r#"{"type": "map", "data": {"@k": {""#))
        .unwrap_or_else(|| panic!("{}", json.stdout));
    assert!(k.ends_with(r#"": 3}}}"#), "{k}");
    assert!(hex(&k[..k.len() - r#"": 3}}}"#.len()]), "{k}");
    let v = json
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(r#"{"type": "map", "data": {"@v": "#))
        .unwrap_or_else(|| panic!("{}", json.stdout));
    assert!(
        v.strip_suffix("}}")
            .is_some_and(|n| n.parse::<u64>().is_ok()),
        "{v}"
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn output_file_and_interval_exit() {
    require_root!();
    let path = scratch("out.txt");
    let p = path.display().to_string();
    let out = run_weft(
        &[
            "-o",
            &p,
            "-e",
            "interval:ms:20 { @n++; if (@n == 3) { exit(); } }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, "\n\n@n: 3\n");
    // bpftrace writes the attach message to stderr, not to the output file.
    assert_eq!(out.stderr, "Attached 1 probe\n");
    let _ = std::fs::remove_file(path);
}

#[test]
fn begin_end_printf_and_scratch_variables() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            r#"BEGIN { $x = 5; $x += 2; $s = "ab"; printf("%d %s %-4s| %5d|%x\n", $x, $s, "z", 42, 255); @m["k", 3] = $x * 2; exit(); } END { printf("end\n"); }"#,
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "7 ab z   |    42|ff\nend\n\n\n@m[k, 3]: 14\n");
}

#[test]
fn notify_line_is_printed_after_attaching() {
    require_root!();
    let cmd = format!("{} getppid 1", workload().display());
    let out = common::run(
        std::process::Command::new(common::weft())
            .env("__BPFTRACE_NOTIFY_PROBES_ATTACHED", "1")
            .args([
                "-q",
                "-c",
                &cmd,
                "-e",
                "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @ = count(); }",
            ]),
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    // On stdout, as bpftrace prints it.
    assert_eq!(out.stdout, "__BPFTRACE_NOTIFY_PROBES_ATTACHED\n\n\n@: 1\n");
}

#[test]
fn sigint_prints_maps_and_unloads_everything() {
    require_root!();
    let mut child = std::process::Command::new(common::weft())
        .env("__BPFTRACE_NOTIFY_PROBES_ATTACHED", "1")
        .args([
            "-e",
            "tracepoint:syscalls:sys_exit_umask { @ = count(); } BEGIN { @b = 7; }",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    use std::io::BufRead;
    stderr.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "Attached 2 probes");
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "__BPFTRACE_NOTIFY_PROBES_ATTACHED");
    let ids_during = weft_prog_ids();
    assert!(
        !ids_during.is_empty(),
        "programs should be loaded while running"
    );
    // SAFETY: sending SIGINT to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (status, timed_out) = common::wait_with_timeout(&mut child, Duration::from_secs(10));
    assert!(!timed_out);
    assert_eq!(status, Some(0));
    let mut out = String::new();
    use std::io::Read;
    stdout.read_to_string(&mut out).unwrap();
    assert!(out.contains("\n@b: 7\n"), "{out}");
    let still = weft_prog_ids();
    assert!(
        ids_during.iter().all(|id| !still.contains(id)),
        "programs left loaded: {still:?}"
    );
}

/// Ids of loaded BPF programs named like this test's (`sys_exit_umask`: no other
/// test traces umask, so tests running in parallel do not disturb it).
fn weft_prog_ids() -> Vec<u64> {
    let out = std::process::Command::new("bpftool")
        .args(["prog", "show"])
        .output();
    let Ok(out) = out else { return vec![1] };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(" name sys_exit_umask "))
        .filter_map(|l| l.split(':').next()?.trim().parse().ok())
        .collect()
}

#[test]
fn errors_are_one_clear_sentence_and_nonzero() {
    require_root!();
    let out = run_weft(&["-e", "tracepoint:nope:nope { }"], Duration::from_secs(10));
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr
            .contains("stdin:1:1-21: ERROR: No matches for tracepoint nope:nope."),
        "{}",
        out.stderr
    );
    let out = run_weft(&["-e", "BEGIN { foo(); }"], Duration::from_secs(10));
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr.contains("unknown function `foo`"),
        "{}",
        out.stderr
    );
    let out = run_weft(
        &["-e", "kprobe:vfs_read { @ = count(); }"],
        Duration::from_secs(10),
    );
    assert_eq!(out.status, Some(1));
    if !std::path::Path::new("/sys/bus/event_source/devices/kprobe").exists() {
        assert!(
            out.stderr
                .contains("ERROR: this kernel cannot attach kprobe probes"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("tracepoint:syscalls:sys_enter_read"),
            "{}",
            out.stderr
        );
    } else {
        assert!(out.stderr.contains("kprobe"), "{}", out.stderr);
    }
    assert!(!out.timed_out);
}

#[test]
fn emitted_object_disassembles_and_loads_with_bpftool() {
    require_root!();
    let path = scratch("obj.o");
    let p = path.display().to_string();
    let out = run_weft(
        &[
            "--emit-elf",
            &p,
            "-e",
            "tracepoint:syscalls:sys_enter_openat { @[comm] = count(); printf(\"%s\\n\", str(args->filename)); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    match std::process::Command::new("llvm-objdump")
        .args(["-d", &p])
        .output()
    {
        Ok(o) => {
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(
                text.contains("tracepoint/syscalls/sys_enter_openat"),
                "{text}"
            );
            assert!(text.contains("call"), "{text}");
        }
        Err(_) => eprintln!("llvm-objdump absent: disassembly not checked"),
    }
    let pin = format!("/sys/fs/bpf/weft-test-{}", std::process::id());
    match std::process::Command::new("bpftool")
        .args(["prog", "loadall", &p, &pin])
        .output()
    {
        Ok(o) => {
            let _ = std::process::Command::new("rm")
                .args(["-rf", &pin])
                .status();
            assert!(
                o.status.success(),
                "bpftool: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        Err(_) => eprintln!("bpftool absent: loading not checked"),
    }
    let _ = std::fs::remove_file(path);
}

// The tracepoint one-liners of seed 004 that this kernel can run.

#[test]
fn seed_execve_printf_and_join() {
    require_root!();
    let w = workload().display().to_string();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_execve /pid == cpid/ { printf(\"%s called execve\\n\", comm); }",
        "getppid 1",
        &[],
    );
    // The command is forked by weft, so before exec its comm is weft's.
    assert_eq!(out.stdout, "weft called execve\n\n\n");
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_execve /pid == cpid/ { printf(\"%-6d %-16s \", pid, comm); join(args->argv); }",
        "getppid 2",
        &[],
    );
    let line = out.stdout.lines().next().unwrap_or_default().to_string();
    let (pid, rest) = line.split_at(7);
    assert!(pid.trim().parse::<u32>().is_ok(), "{line}");
    assert_eq!(rest, format!("weft             {w} getppid 2"));
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_execve /pid == cpid/ { join(args->argv, \",\"); }",
        "getppid 3",
        &["-f", "json"],
    );
    assert!(
        out.stdout.contains(&format!(
            "{{\"type\": \"join\", \"data\": \"{w},getppid,3\"}}\n"
        )),
        "{}",
        out.stdout
    );
}

#[test]
fn seed_sched_switch_printf() {
    require_root!();
    let out = trace_workload(
        "tracepoint:sched:sched_switch /args->prev_pid == cpid || args->next_pid == cpid/ { printf(\"%-8d %-16s -> %-16s\\n\", nsecs, args->prev_comm, args->next_comm); }",
        "nanosleep 1000000 10",
        &[],
    );
    // `%d` prints the low 32 bits of nsecs, as bpftrace does. Every sleep
    // switches the workload out (and back in).
    let out_lines = out
        .stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("weftwl"))
        .count();
    assert!(out_lines >= 10, "{}", out.stdout);
    for line in out.stdout.lines().filter(|l| !l.is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(
            words[0].parse::<i64>().is_ok() && words.len() >= 3 && words.contains(&"->"),
            "{line}"
        );
    }
}

#[test]
fn seed_runqueue_latency() {
    require_root!();
    // The seed one-liner, limited to the workload's wakeups; without the
    // `prev_pid == 0` (idle) condition every wakeup pairs with one switch-in.
    let out = trace_workload(
        "tracepoint:sched:sched_wakeup /args->pid == cpid/ { @queuetime[args->pid] = nsecs; }
tracepoint:sched:sched_switch /@queuetime[args->next_pid]/ { @us = hist((nsecs - @queuetime[args->next_pid]) / 1000); @n = count(); delete(@queuetime[args->next_pid]); }",
        "nanosleep 1000000 10",
        &[],
    );
    let n: u64 = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("@n: "))
        .unwrap_or("0")
        .parse()
        .unwrap();
    assert!((10..=14).contains(&n), "{}", out.stdout);
    let seed = trace_workload(
        "tracepoint:sched:sched_wakeup /args->pid == cpid/ { @queuetime[args->pid] = nsecs; }
tracepoint:sched:sched_switch /args->prev_pid == 0 && @queuetime[args->next_pid]/ { @us = hist((nsecs - @queuetime[args->next_pid]) / 1000); delete(@queuetime[args->next_pid]); }",
        "nanosleep 1000000 10",
        &[],
    );
    assert!(seed.stdout.starts_with("\n\n"), "{}", seed.stdout);
}

#[test]
fn seed_tcp_retransmit_with_ntop_attaches() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            "tracepoint:tcp:tcp_retransmit_skb { printf(\"retransmit: %s:%d -> %s:%d\\n\", ntop(args->saddr), args->sport, ntop(args->daddr), args->dport); } interval:ms:100 { exit(); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stderr, "Attached 2 probes\n");
    let out = run_weft(
        &[
            "-e",
            "BEGIN { printf(\"%s %s\\n\", ntop(0x0100007f), ntop(2, 0x0a00a8c0)); @[ntop(0x0100007f)] = count(); exit(); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.stdout, "127.0.0.1 192.168.0.10\n\n\n@[127.0.0.1]: 1\n");
}

#[test]
fn print_top_div_clear_and_zero_match_bpftrace() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            "BEGIN { @a[1] = 10; @a[2] = 20; @a[3] = 30; print(@a, 2); clear(@a); @b = count(); zero(@b); @c[1] = 5; @c[2] = 7; print(@c, 0, 2); exit(); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(
        out.stdout,
        "@a[2]: 20\n@a[3]: 30\n@c[1]: 2\n@c[2]: 3\n\n\n@b: 0\n@c[1]: 5\n@c[2]: 7\n"
    );
}

#[test]
fn full_ring_buffer_drops_are_counted_exactly() {
    require_root!();
    let path = scratch("drops.txt");
    let p = path.display().to_string();
    let cmd = format!("{} getppid 200000", workload().display());
    let out = common::run(
        std::process::Command::new(common::weft())
            .env("BPFTRACE_PERF_RB_PAGES", "1")
            .args([
                "-q",
                "-o",
                &p,
                "-c",
                &cmd,
                "-e",
                "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { printf(\"%d\\n\", tid); }",
            ]),
        Duration::from_secs(60),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let text = std::fs::read_to_string(&path).unwrap();
    let delivered = text.lines().filter(|l| l.parse::<u32>().is_ok()).count() as u64;
    // `Lost N events` as losses happen, on stderr as bpftrace writes them.
    let lost: u64 = out
        .stderr
        .lines()
        .filter_map(|l| {
            l.strip_prefix("Lost ")?
                .strip_suffix(" events")?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert_eq!(
        delivered + lost,
        200_000,
        "delivered {delivered}, lost {lost}"
    );
    assert!(
        lost > 0,
        "a one-page ring buffer should overflow at this rate"
    );
    // And the total on stderr.
    assert!(
        out.stderr.contains(&format!(
            "weft: {lost} event(s) lost in all: the ring buffer was full"
        )),
        "{}",
        out.stderr
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn dash_p_limits_probes_to_that_process() {
    require_root!();
    let mut target = std::process::Command::new(workload())
        .args(["sleep", "2000", "getppid", "500"])
        .spawn()
        .unwrap();
    let pid = target.id().to_string();
    let out = run_weft(
        &[
            "-q",
            "-p",
            &pid,
            "-e",
            "tracepoint:syscalls:sys_enter_getppid { @ = count(); }",
        ],
        Duration::from_secs(30),
    );
    let _ = target.wait();
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "\n\n@: 500\n");
}

#[test]
fn builtins_and_str_length() {
    require_root!();
    let path = scratch("abcdefghij");
    let p = path.display().to_string();
    // Only our file: the dynamic loader's opens depend on LD_LIBRARY_PATH,
    // which cargo sets for tests.
    let out = trace_workload(
        &format!(
            "tracepoint:syscalls:sys_enter_openat /pid == cpid && str(args->filename) == \"{p}\"/ {{ @[str(args->filename, 5), uid, gid, pid == tid, cpid == pid] = count(); @e = elapsed > 0; }}"
        ),
        &format!("openat {p} 2"),
        &[],
    );
    // `str(s, 5)` reads 5 bytes with the NUL, as bpftrace's current release does.
    let prefix: String = p.chars().take(4).collect();
    assert!(
        out.stdout
            .contains(&format!("@[{prefix}, 0, 0, true, true]: 2\n")),
        "{}",
        out.stdout
    );
    // Comparisons are booleans, as in bpftrace's current release.
    assert!(out.stdout.contains("@e: true\n"), "{}", out.stdout);
    let _ = std::fs::remove_file(path);
}

#[test]
fn verifier_rejection_points_at_the_script() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            "BEGIN { $i = 0; while ($i < 1000000) { $i++; } exit(); }",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr
            .contains("ERROR: the kernel's verifier rejected probe program `BEGIN`"),
        "{}",
        out.stderr
    );
    // The failing instruction comes from the loop (its condition or body: columns 17 to 47).
    let col: u32 = out
        .stderr
        .strip_prefix("stdin:1:")
        .and_then(|r| r.split(['-', ':']).next())
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    assert!((17..=47).contains(&col), "{}", out.stderr);
    assert!(
        out.stderr.contains("bound loops to fewer iterations"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("processed 1000001 insns"),
        "{}",
        out.stderr
    );
}

#[test]
fn printf_conversions() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            r#"BEGIN { printf("%i|%5i|%lu|%llu|%X|%c|%p|%-3s|%03d\n", 42, -3, 7, 8, 255, 65, 4096, "s", 5); exit(); }"#,
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.stdout, "42|   -3|7|8|FF|A|0x1000|s  |005\n\n\n");
}

#[test]
fn full_maps_are_counted_and_reported() {
    require_root!();
    let out = common::run(
        std::process::Command::new(common::weft())
            .env("BPFTRACE_MAP_KEYS_MAX", "100")
            .args([
                "-q",
                "-e",
                "BEGIN { $i = 0; while ($i < 150) { @[$i] = 1; $i++; } exit(); }",
            ]),
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout.lines().filter(|l| l.starts_with("@[")).count(),
        100
    );
    assert!(
        out.stderr
            .contains("WARNING: Map full; can't update element. 50 update(s) failed"),
        "{}",
        out.stderr
    );
}

#[test]
fn config_max_map_keys_and_lru_declarations() {
    require_root!();
    let run = |script: &str| {
        common::run(
            std::process::Command::new(common::weft())
                .env_remove("BPFTRACE_MAP_KEYS_MAX")
                .args(["-q", "-e", script]),
            Duration::from_secs(30),
        )
    };
    let full = run("config = { max_map_keys = 100 }
BEGIN { $i = 0; while ($i < 150) { @m[$i] = 1; $i++; } exit(); }");
    assert_eq!(full.status, Some(0), "{}", full.stderr);
    assert_eq!(
        full.stdout.lines().filter(|l| l.starts_with("@m[")).count(),
        100
    );
    assert!(
        full.stderr
            .contains("WARNING: Map full; can't update element. 50 update(s) failed"),
        "{}",
        full.stderr
    );
    // An LRU map evicts instead of failing.
    let lru = run("let @m = lruhash(100);
BEGIN { $i = 0; while ($i < 150) { @m[$i] = 1; $i++; } exit(); }");
    assert_eq!(lru.status, Some(0), "{}", lru.stderr);
    assert_eq!(
        lru.stdout.lines().filter(|l| l.starts_with("@m[")).count(),
        100,
        "{}",
        lru.stdout
    );
    assert!(!lru.stderr.contains("failed"), "{}", lru.stderr);
}

#[test]
fn data_loc_strings_wildcards_and_probe_names() {
    require_root!();
    let w = workload().display().to_string();
    let out = trace_workload(
        "tracepoint:sched:sched_process_exec /pid == cpid/ { printf(\"%s|%s\\n\", args->filename, str(args->filename)); }
tracepoint:syscalls:sys_enter_getpp* /pid == cpid/ { @[probe] = count(); }",
        "getppid 9",
        &[],
    );
    assert_eq!(
        out.stdout,
        format!("{w}|{w}\n\n\n@[tracepoint:syscalls:sys_enter_getppid]: 9\n")
    );
}

#[test]
fn time_prints_local_time() {
    require_root!();
    let out = run_weft(
        &["-q", "-e", "BEGIN { time(\"%Y\\n\"); time(); exit(); }"],
        Duration::from_secs(20),
    );
    let year = std::process::Command::new("date")
        .arg("+%Y")
        .output()
        .unwrap();
    let year = String::from_utf8_lossy(&year.stdout).trim().to_string();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], year, "{}", out.stdout);
    let hms: Vec<&str> = lines[1].split(':').collect();
    assert!(
        hms.len() == 3 && hms.iter().all(|p| p.len() == 2 && p.parse::<u8>().is_ok()),
        "{}",
        out.stdout
    );
}

#[test]
fn listing_tracepoints_with_and_without_arguments() {
    require_root!();
    let out = run_weft(
        &["-l", "tracepoint:syscalls:sys_enter_getpp*"],
        Duration::from_secs(20),
    );
    assert_eq!(out.stdout, "tracepoint:syscalls:sys_enter_getppid\n");
    let out = run_weft(
        &["-lv", "tracepoint:syscalls:sys_enter_openat"],
        Duration::from_secs(20),
    );
    assert_eq!(
        out.stdout,
        "tracepoint:syscalls:sys_enter_openat\n    int __syscall_nr\n    int dfd\n    const char * filename\n    int flags\n    umode_t mode\n"
    );
    let out = run_weft(&["-l", "sched:sched_switch"], Duration::from_secs(20));
    assert_eq!(out.stdout, "tracepoint:sched:sched_switch\n");
}

#[test]
fn script_file_with_positional_parameters_and_sigterm() {
    require_root!();
    let path = scratch("script.bt");
    std::fs::write(&path, "#!/usr/bin/env weft\n// counts calls from one process\ntracepoint:syscalls:sys_enter_getppid /pid == $1/ {\n  @calls[str($2)] = count();\n}\n").unwrap();
    let mut target = std::process::Command::new(workload())
        .args(["sleep", "1500", "getppid", "77", "sleep", "60000"])
        .spawn()
        .unwrap();
    let pid = target.id().to_string();
    let mut weft = std::process::Command::new(common::weft())
        .args([path.to_str().unwrap(), &pid, "label"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3000));
    // SAFETY: signalling our own children.
    unsafe { libc::kill(weft.id() as i32, libc::SIGTERM) };
    let (status, timed_out) = common::wait_with_timeout(&mut weft, Duration::from_secs(10));
    let _ = target.kill();
    let _ = target.wait();
    assert!(!timed_out);
    assert_eq!(status, Some(0));
    let mut out = String::new();
    use std::io::Read;
    weft.stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(out, "\n\n@calls[label]: 77\n");
    let _ = std::fs::remove_file(path);
}

#[test]
fn maps_that_never_fired_print_like_bpftrace() {
    require_root!();
    // sethostname never runs during the test: every map stays empty.
    let out = run_weft(
        &[
            "-e",
            "interval:ms:50 { exit(); } tracepoint:syscalls:sys_enter_sethostname { @x = 5; @c = count(); @h = hist(1); @s = sum(3); @st = stats(2); @k[1] = count(); @str = \"abc\"; @mn = min(4); @a = avg(4); }",
        ],
        Duration::from_secs(20),
    );
    // bpftrace 0.17 printed an empty line per map (`@c: 0` for the keyless
    // count()); the current release prints nothing for a map without entries.
    assert_eq!(out.stdout, "\n\n");
}

#[test]
fn output_keeps_its_order_around_map_prints_in_end() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            r#"BEGIN { @a = 1; exit(); } END { print(@a); printf("x\n"); print(@a); printf("y\n"); }"#,
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.stdout, "@a: 1\nx\n@a: 1\ny\n\n\n@a: 1\n");
}

#[test]
fn cat_prints_the_file_its_formatted_path_names() {
    require_root!();
    let file = scratch("cat-me.txt");
    std::fs::write(&file, "hello\nworld").unwrap();
    let path = file.display().to_string();
    let (dir, name) = path.rsplit_once('/').unwrap();
    let script = format!(
        r#"BEGIN {{ cat("{path}"); printf("|after\n"); cat("{dir}/%s", "{name}"); printf("|\n"); cat("/nonexistent/weft"); printf("|end\n"); exit(); }}"#
    );
    let out = run_weft(&["-q", "-e", &script], Duration::from_secs(20));
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    // As bpftrace 0.17 prints it: the contents as they are, nothing added.
    assert!(
        out.stdout
            .starts_with("hello\nworld|after\nhello\nworld|\n|end\n"),
        "{:?}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("ERROR: failed to open file '/nonexistent/weft' (No such file or directory)"),
        "{}",
        out.stderr
    );
    let _ = std::fs::remove_file(file);
}

#[test]
fn buf_reads_bytes_that_r_prints() {
    require_root!();
    let out = trace_workload(
        r#"tracepoint:syscalls:sys_enter_write /pid == cpid/ { @[buf(args->buf, args->count)] = count(); printf("%r %rx %rh\n", buf(args->buf, 3), buf(args->buf, 2), buf(args->buf, 2)); }
BEGIN { printf("%r\n", buf("hi\x00there\n", 9)); printf("%r\n", buf("x", -1)); }"#,
        "write 5 3",
        &[],
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    // Escapes and hex as bpftrace 0.17 prints them.
    assert_eq!(lines.first(), Some(&"hi\\x00there\\x0a"), "{}", out.stdout);
    // A string gives no more than its own bytes, whatever length is asked.
    assert_eq!(lines.get(1), Some(&"x\\x00"), "{}", out.stdout);
    assert_eq!(
        lines
            .iter()
            .filter(|l| **l == "xxx \\x78\\x78 78 78")
            .count(),
        3,
        "{}",
        out.stdout
    );
    // A buffer key shows its bytes (bpftrace 0.17 pads it with 59 \x00s).
    assert!(lines.contains(&"@[xxxxx]: 3"), "{}", out.stdout);
}

#[test]
fn strftime_prints_nsecs_as_wall_clock_time() {
    require_root!();
    let out = run_weft(
        &[
            "-q",
            "-e",
            r#"BEGIN { printf("%s|%s\n", strftime("%s", nsecs), strftime("%H:%M:%S.%f", nsecs)); exit(); }"#,
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let line = out.stdout.lines().next().unwrap_or("");
    let (epoch, clock) = line.split_once('|').expect(line);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let epoch: i64 = epoch.parse().expect(line);
    assert!((now - epoch).abs() <= 5, "{line} vs {now}");
    // %f: six digits of microseconds, as bpftrace prints them.
    let micros = clock.rsplit_once('.').map(|(_, f)| f).unwrap_or("");
    assert!(
        micros.len() == 6 && micros.bytes().all(|b| b.is_ascii_digit()),
        "{line}"
    );
}

/// As bpftrace's current release: `print()` of a keyless map nothing has
/// written shows its zero (weft printed nothing), a keyless count() that
/// was cleared or deleted prints nothing at exit (weft printed `@c: 0`), and
/// a script of only BEGIN and END ends by itself after BEGIN (weft ran
/// until Ctrl-C).
#[test]
fn unassigned_and_emptied_keyless_maps_and_begin_only_scripts() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            "BEGIN { print(@); print(@s); } END { @ = 1; @s = stats(1); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "@: 0\n@s: { .count = 0, .average = 0, .total = 0 }\n\n\n@: 1\n@s: { .count = 1, .average = 1, .total = 1 }\n"
    );
    let out = run_weft(
        &[
            "-e",
            "BEGIN { @c = count(); clear(@c); @d = count(); delete(@d); @e = count(); @h = hist(3); clear(@h); }",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "\n\n@e: 1\n");
    assert_eq!(out.stderr, "Attached 1 probe\n");
}
