//! Sampling probes (profile, software, hardware), stacks and symbols on the
//! running kernel, each filtered to the workload's pid (`cpid`).

mod common;

use std::path::Path;
use std::time::Duration;

use common::{marker_in_file, run_weft, trace_workload};

/// Sum of the `]: N` counts of a printed map.
fn total(out: &str) -> u64 {
    out.lines()
        .filter_map(|l| l.strip_prefix("]: "))
        .filter_map(|n| n.trim().parse::<u64>().ok())
        .sum()
}

/// The value of `@name: N` in text output.
fn scalar(out: &str, name: &str) -> u64 {
    let prefix = format!("{name}: ");
    out.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no `{name}` in output:\n{out}"))
}

#[test]
fn profile_user_stacks_name_the_spinning_function() {
    require_root!();
    // weft exits after 1 s while the workload still spins, so the process is
    // alive when its stacks are symbolized.
    let out = trace_workload(
        "profile:hz:99 /pid == cpid/ { @[ustack] = count(); } interval:ms:1000 { exit(); }",
        "spin 5000",
        &[],
    );
    assert!(
        out.stdout.contains("\n        weft_workload_spin+"),
        "weft_workload_spin is not in the stacks:\n{}",
        out.stdout
    );
    // At most 99 samples per second on one CPU; the workload needs a few to show.
    let samples = total(&out.stdout);
    assert!(
        (5..=120).contains(&samples),
        "{samples} samples:\n{}",
        out.stdout
    );
    assert!(out.stdout.contains("@[\n        "), "{}", out.stdout);
}

#[test]
fn profile_kernel_and_user_stacks_with_comm_as_keys() {
    require_root!();
    let out = trace_workload(
        "profile:ms:10 /pid == cpid/ { @[kstack, ustack(perf, 4), comm] = count(); } interval:ms:600 { exit(); }",
        "spin 5000",
        &[],
    );
    // A user-mode sample has no kernel stack: the key starts with an empty one.
    assert!(out.stdout.contains("@[, \n\t"), "{}", out.stdout);
    assert!(
        out.stdout.contains(" weft_workload_spin+"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("weft-workload)\n"), "{}", out.stdout);
    assert!(out.stdout.contains(", weftwl]: "), "{}", out.stdout);
}

#[test]
fn software_page_faults_count_the_touched_pages() {
    require_root!();
    // A getppid before and after the touching opens and closes a window, so
    // the count holds the touched pages' faults and nothing else.
    // `@runs` counts the runs of the workload's faults that no other
    // task's fault on the same CPU interrupts (`@last`: the CPU's last
    // faulting pid).
    let script = "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @on = 1 - @on; } \
                  software:page-faults:1 /@on == 1/ { \
                      if (pid == cpid) { @ = count(); if (@last[cpu] != cpid) { @runs = count(); } } \
                      @last[cpu] = pid; } \
                  software:faults /pid == cpid && @on == 1/ { @hundreds = count(); } \
                  END { clear(@last); }";
    let out = trace_workload(script, "getppid 1 touch-pages 3000 getppid 1", &[]);
    assert_eq!(scalar(&out.stdout, "@"), 3000, "{}", out.stdout);
    // The default count of page-faults is 100 events per sample, counted
    // per CPU for every task. An uninterrupted run of L of the workload's
    // faults holds L/100 samples rounded down or up, whatever the counter's
    // phase: 3000 faults in one run give exactly 30, and each further run
    // (the workload migrated, or another task faulted on its CPU: a busy
    // machine) can move the total by one at most.
    let samples = scalar(&out.stdout, "@hundreds");
    let runs = scalar(&out.stdout, "@runs");
    assert!(
        (30 - (runs - 1).min(30)..=30 + (runs - 1)).contains(&samples),
        "{samples} samples in {runs} runs:\n{}",
        out.stdout
    );
}

#[test]
fn software_cpu_clock_samples_on_every_cpu() {
    require_root!();
    // cpu-clock does not fire on an idle CPU here: keep every CPU busy.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut spinners: Vec<_> = (0..cpus)
        .map(|_| {
            std::process::Command::new(common::workload())
                .args(["spin", "3000"])
                .spawn()
                .unwrap()
        })
        .collect();
    let out = run_weft(
        &[
            "-q",
            "-e",
            "software:cpu-clock:10000000 { @[cpu] = count(); } interval:ms:500 { exit(); }",
        ],
        Duration::from_secs(20),
    );
    for s in &mut spinners {
        let _ = s.kill();
        let _ = s.wait();
    }
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let keys = out.stdout.lines().filter(|l| l.starts_with("@[")).count();
    assert_eq!(keys, cpus, "{}", out.stdout);
}

#[test]
fn hardware_events_without_a_pmu_fail_with_one_sentence() {
    require_root!();
    testgate::only_if!(
        !Path::new("/sys/bus/event_source/devices/cpu").exists(),
        "this machine has a CPU PMU, so hardware events work"
    );
    let out = run_weft(
        &["-e", "hardware:cycles:1000000 { @ = count(); }"],
        Duration::from_secs(20),
    );
    assert_ne!(out.status, Some(0));
    assert!(!out.timed_out);
    assert!(
        out.stderr
            .contains("hardware:cycles:1000000: this machine has no hardware performance counters"),
        "{}",
        out.stderr
    );
}

/// Seed 004: off-CPU time by kernel stack, limited to the workload.
#[test]
fn offcpu_time_by_kernel_stack() {
    require_root!();
    let script = "tracepoint:sched:sched_switch /args->prev_pid == cpid/ { @blocked[args->prev_pid] = nsecs; }
tracepoint:sched:sched_switch /args->next_pid == cpid && @blocked[args->next_pid]/ {
    @us[kstack] = sum((nsecs - @blocked[args->next_pid]) / 1000);
    delete(@blocked[args->next_pid]);
}";
    let out = trace_workload(script, "nanosleep 20000000 5", &[]);
    assert!(out.stdout.contains("@us[\n        "), "{}", out.stdout);
    assert!(
        out.stdout.contains("\n        __schedule+"),
        "{}",
        out.stdout
    );
    // Five 20 ms sleeps: at least 100 ms off CPU in total.
    let us = total(&out.stdout);
    assert!(us >= 100_000, "{us} us off CPU:\n{}", out.stdout);
}

/// Seed 004: `@blocked[args->prev_pid, kstack] = nsecs` inside an `if`.
#[test]
fn blocked_stacks_as_tuple_keys() {
    require_root!();
    let script = "tracepoint:sched:sched_switch /args->prev_pid == cpid/ {
    if (args->prev_state == 1 || args->prev_state == 2) {
        @blocked[args->prev_pid, kstack] = nsecs;
    }
}
tracepoint:sched:sched_switch /args->prev_pid == 0 && @blocked[args->next_pid, kstack]/ {
    @offcpu_us[@blocked[args->next_pid, kstack]] = sum((nsecs - @blocked[args->next_pid, kstack]) / 1000);
    delete(@blocked[args->next_pid, kstack]);
}";
    let out = trace_workload(script, "nanosleep 20000000 5", &[]);
    // Every sleep blocks in the same place: one key, the workload's pid and
    // that stack. (The workload may also block once in a page fault while
    // its pages are read from disk: a key of its own, with another stack.)
    let keys: Vec<&str> = out
        .stdout
        .split("@blocked[")
        .skip(1)
        .map(|entry| entry.split("]: ").next().unwrap_or(""))
        .collect();
    let sleeps: Vec<&&str> = keys
        .iter()
        .filter(|k| k.contains("\n        do_nanosleep+"))
        .collect();
    assert_eq!(sleeps.len(), 1, "{}", out.stdout);
    assert!(
        sleeps[0].split('\n').next().unwrap().ends_with(", "),
        "{}",
        out.stdout
    );
    assert!(
        keys.iter()
            .all(|k| k.contains("\n        __schedule+") || k.contains("\n        schedule+")),
        "{}",
        out.stdout
    );
}

#[test]
fn printf_stacks_and_kernel_symbols() {
    require_root!();
    let out = trace_workload(
        "tracepoint:sched:sched_switch /args->prev_pid == cpid/ { printf(\"<%s>\\n\", kstack(2)); @[ksym(0)] = count(); }",
        "nanosleep 1000000 1",
        &[],
    );
    // `__traceiter_sched_switch` comes first while the tracepoint has
    // another callback too (any enabled trace event adds the kernel's
    // command-line recorder there, as `debugf()` does).
    assert!(
        out.stdout.contains("<\n        __schedule+")
            || out.stdout.contains("<\n        __traceiter_sched_switch+"),
        "{}",
        out.stdout
    );
    // As bpftrace prints an unresolved null address.
    assert!(out.stdout.contains("@[0]: "), "{}", out.stdout);
}

#[test]
fn raw_stacks_print_bare_addresses() {
    require_root!();
    let wl = common::workload().display().to_string();
    let out = trace_workload(
        &format!(
            "uprobe:{wl}:weft_workload_marker /pid == cpid/ {{ @u[ustack(raw, 1)] = count(); @k[kstack(raw, 1)] = count(); }}"
        ),
        "call 4",
        &[],
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    // @k's kernel stack is empty (a uprobe fires in user mode); @u's one
    // frame is the marker's address, unindented, in hex.
    assert_eq!(lines.len(), 6, "{}", out.stdout);
    assert_eq!(&lines[..4], &["", "", "@k[]: 4", "@u["], "{}", out.stdout);
    let addr = u64::from_str_radix(lines[4], 16)
        .unwrap_or_else(|_| panic!("not an address: {}", out.stdout));
    // The address and the marker's file offset share the page offset.
    let (_, offset) = marker_in_file();
    assert_eq!(addr & 0xfff, offset & 0xfff, "{}", out.stdout);
    assert_eq!(lines[5], "]: 4", "{}", out.stdout);
}

#[test]
fn build_id_stacks_name_the_file_and_offset() {
    require_root!();
    let wl = common::workload().display().to_string();
    let out = trace_workload(
        &format!(
            "uprobe:{wl}:weft_workload_marker /pid == cpid/ {{ @[ustack(build_id, 1)] = count(); }}"
        ),
        "call 4",
        &[],
    );
    let (id, offset) = marker_in_file();
    assert_eq!(out.stdout, format!("\n\n@[\n{id} 0x{offset:x}\n]: 4\n"));
}
