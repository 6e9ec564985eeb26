//! Kernel tests of bpftrace's config keys on the workload, table-driven:
//! each case sets keys in the script's `config` block and/or the
//! `BPFTRACE_*` environment (which wins) and checks weft's exact output.
//!
//! - `print_maps_on_exit`: the maps are not printed at exit (bpftrace's two
//!   newlines still are).
//! - `license`: the programs load under another GPL-compatible licence.
//! - `max_strlen`: `str()` keeps at most that many characters; a longer
//!   string prints cut, with bpftrace's `..` trailer.
//! - `max_cat_bytes`: `cat()` prints at most that many bytes of the file.
//! - `stack_mode`: `raw` prints addresses; the environment's `perf` wins
//!   over the script's `raw`; `build_id` gives the workload's build id and
//!   the marker function's offset in its file.

mod common;

use std::time::Duration;

use common::{Outcome, marker_in_file, run, scratch, weft, workload};

struct Case {
    name: &'static str,
    /// The script; `WL` stands for the workload's path.
    script: &'static str,
    steps: &'static str,
    env: &'static [(&'static str, &'static str)],
    check: fn(&Outcome),
}

fn run_case(case: &Case) -> Outcome {
    let wl = workload().display().to_string();
    let script = case.script.replace("WL", &wl);
    let cmd = format!("{wl} {}", case.steps);
    let mut command = std::process::Command::new(weft());
    command.args(["-q", "-c", &cmd, "-e", &script]);
    for (k, v) in case.env {
        command.env(k, v);
    }
    let out = run(&mut command, Duration::from_secs(30));
    assert!(!out.timed_out, "{}: weft timed out", case.name);
    out
}

fn ok(out: &Outcome) {
    assert_eq!(out.status, Some(0), "stderr:\n{}", out.stderr);
}

const GETPPID: &str = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n = count(); }";

static CASES: &[Case] = &[
    Case {
        name: "maps are printed by default",
        script: GETPPID,
        steps: "getppid 25",
        env: &[],
        check: |out| {
            ok(out);
            assert_eq!(out.stdout, "\n\n@n: 25\n");
        },
    },
    Case {
        name: "print_maps_on_exit = 0",
        script: "config = { print_maps_on_exit = 0 } tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n = count(); }",
        steps: "getppid 25",
        env: &[],
        check: |out| {
            ok(out);
            assert_eq!(out.stdout, "\n\n");
        },
    },
    Case {
        name: "BPFTRACE_PRINT_MAPS_ON_EXIT wins over the script",
        script: "config = { print_maps_on_exit = true } tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n = count(); }",
        steps: "getppid 25",
        env: &[("BPFTRACE_PRINT_MAPS_ON_EXIT", "0")],
        check: |out| {
            ok(out);
            assert_eq!(out.stdout, "\n\n");
        },
    },
    Case {
        name: "license",
        script: "config = { license = \"Dual BSD/GPL\" } tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n = count(); }",
        steps: "getppid 25",
        env: &[],
        check: |out| {
            ok(out);
            assert_eq!(out.stdout, "\n\n@n: 25\n");
        },
    },
    Case {
        name: "max_strlen",
        script: "config = { max_strlen = 8 } tracepoint:syscalls:sys_enter_openat /pid == cpid && str(args->filename) == \"/dev/nul\"/ { @[str(args->filename)] = count(); }",
        steps: "openat /dev/null 3",
        env: &[],
        check: |out| {
            ok(out);
            assert_eq!(out.stdout, "\n\n@[/dev/nul..]: 3\n");
        },
    },
    Case {
        name: "BPFTRACE_MAX_STRLEN wins over the script",
        script: "config = { max_strlen = 8 } tracepoint:syscalls:sys_enter_openat /pid == cpid && str(args->filename) == \"/dev/\"/ { @[str(args->filename)] = count(); }",
        steps: "openat /dev/null 3",
        env: &[("BPFTRACE_MAX_STRLEN", "5")],
        check: |out| {
            ok(out);
            assert_eq!(out.stdout, "\n\n@[/dev/..]: 3\n");
        },
    },
    Case {
        name: "stack_mode = raw",
        script: "config = { stack_mode = raw } uprobe:WL:weft_workload_marker /pid == cpid/ { @[ustack(1)] = count(); }",
        steps: "call 4",
        env: &[],
        check: |out| {
            ok(out);
            let lines: Vec<&str> = out.stdout.lines().collect();
            assert_eq!(lines.len(), 5, "{}", out.stdout);
            assert_eq!(&lines[..3], &["", "", "@["], "{}", out.stdout);
            assert!(
                u64::from_str_radix(lines[3], 16).is_ok_and(|a| a > 0),
                "not an address: {}",
                out.stdout
            );
            assert_eq!(lines[4], "]: 4", "{}", out.stdout);
        },
    },
    Case {
        name: "BPFTRACE_STACK_MODE=perf wins over the script's raw",
        script: "config = { stack_mode = raw } uprobe:WL:weft_workload_marker /pid == cpid/ { @[ustack(1)] = count(); }",
        steps: "call 4",
        env: &[("BPFTRACE_STACK_MODE", "perf")],
        check: |out| {
            ok(out);
            let wl = workload().display().to_string();
            let line = out
                .stdout
                .lines()
                .find(|l| l.starts_with('\t'))
                .unwrap_or_else(|| panic!("no frame:\n{}", out.stdout));
            let (addr, rest) = line[1..].split_once(' ').expect("address and symbol");
            assert!(u64::from_str_radix(addr, 16).is_ok(), "{line}");
            assert_eq!(rest, format!("weft_workload_marker+0 ({wl})"));
        },
    },
    Case {
        name: "stack_mode = build_id",
        script: "config = { stack_mode = build_id } uprobe:WL:weft_workload_marker /pid == cpid/ { @[ustack(1)] = count(); }",
        steps: "call 4",
        env: &[],
        check: |out| {
            ok(out);
            let (id, offset) = marker_in_file();
            assert_eq!(
                out.stdout,
                format!("\n\n@[\n{id} 0x{offset:x}\n]: 4\n"),
                "stderr:\n{}",
                out.stderr
            );
        },
    },
];

#[test]
fn config_keys_on_the_workload() {
    require_root!();
    for case in CASES {
        let out = run_case(case);
        eprintln!("case: {}", case.name);
        (case.check)(&out);
    }
}

#[test]
fn max_cat_bytes_from_the_script_and_the_environment() {
    require_root!();
    let file = scratch("cat.txt");
    std::fs::write(&file, "abcdefgh\n").expect("scratch file");
    let script = format!(
        "config = {{ max_cat_bytes = 3 }} BEGIN {{ cat(\"{}\"); printf(\"|\\n\"); exit(); }}",
        file.display()
    );
    for (env, want) in [(None, "abc|\n"), (Some("5"), "abcde|\n")] {
        let mut command = std::process::Command::new(weft());
        command.args(["-q", "-e", &script]);
        if let Some(n) = env {
            command.env("BPFTRACE_MAX_CAT_BYTES", n);
        }
        let out = run(&mut command, Duration::from_secs(30));
        assert_eq!(out.status, Some(0), "{}", out.stderr);
        assert_eq!(out.stdout, format!("{want}\n\n"));
    }
    let _ = std::fs::remove_file(file);
}
