//! Kernel tests of builtins on the workload, one behaviour each:
//!
//! - `numaid` is the NUMA node of the CPU each event fired on: every
//!   getppid of the workload is counted under a node this machine has.
//! - `print(value)` prints a variable, a tuple, a builtin, a map element,
//!   a literal and a time on a line each, in text and JSON, as bpftrace's
//!   current release does.
//! - `strlen()` counts to the first NUL; `strcontains()` finds a needle in the workload's paths and comm, and
//!   in literals and variables whose NULs end them, with exact answers.
//! - `strncmp()` compares the workload's paths, comm, literals, variables
//!   and positional parameters up to `n` bytes (literal or run-time), never
//!   past the shorter string: exact 0/1 answers.
//! - `usermode` is 1 in a uprobe and in BEGIN, 0 in a tracepoint, and
//!   mostly 1 in CPU samples of a workload spinning in user space.
//! - `ncpus` (and `__builtin_ncpus`) is the count of possible CPUs that
//!   /sys/devices/system/cpu/possible lists.
//! - `delete()` says whether the element was there, for keyed and keyless
//!   maps, and a statement `delete()` still deletes.
//! - `len(@m)` counts a map's elements as they are added and deleted, and
//!   `has_key()` finds a key (a tuple for a map of two keys) without adding it.
//! - `pton()` gives an address's bytes in network order, which `ntop()`
//!   prints back, from a call, a variable and a map key, for IPv4 and IPv6.
//! - `strftime()` values are kept in variables, map keys and values and
//!   tuples, and print formatted there in text and JSON.
//! - `macaddr()` prints six bytes read at an address, from a struct member
//!   and from a byte array value, as upper-case hex.
//! - `container_of()` moves a pointer back by a member's offset in a
//!   script's struct, and the member read through it is the original.
//! - `nsecs(clock)` and `jiffies` read the kernel's clocks: monotonic before
//!   boot time, TAI between two reads of CLOCK_TAI by the test, and a 50 ms
//!   sleep between two reads seen by both nanoseconds and jiffies.

mod common;

use std::time::Duration;

use common::{run_weft, trace_workload};

#[test]
fn numaid_names_a_node_of_this_machine() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @[numaid] = count(); }",
        "getppid 25",
        &[],
    );
    let mut total = 0;
    for line in out.stdout.lines().filter(|l| l.starts_with("@[")) {
        // `@[0]: 25`
        let (node, count) = line
            .strip_prefix("@[")
            .and_then(|l| l.split_once("]: "))
            .unwrap_or_else(|| panic!("unexpected line `{line}`"));
        let node_dir = format!("/sys/devices/system/node/node{node}");
        assert!(
            std::path::Path::new(&node_dir).exists() || node == "0",
            "node {node} is not one of this machine's:\n{}",
            out.stdout
        );
        total += count.parse::<u64>().expect("a count");
    }
    assert_eq!(total, 25, "{}", out.stdout);
}

#[test]
fn print_of_values_in_text_and_json() {
    require_root!();
    let script = r#"tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n[comm] = 7; $t = (comm, @n[comm], -2); print($t); print(comm); print(@n[comm]); print("lit\"q"); }"#;
    let out = trace_workload(script, "getppid 2", &[]);
    let once = "(weftwl, 7, -2)\nweftwl\n7\nlit\"q\n";
    assert_eq!(
        out.stdout,
        format!("{once}{once}\n\n@n[weftwl]: 7\n"),
        "{}",
        out.stderr
    );
    let out = trace_workload(script, "getppid 1", &["-f", "json"]);
    assert_eq!(
        out.stdout,
        r#"{"type": "value", "data": ["weftwl",7,-2]}
{"type": "value", "data": "weftwl"}
{"type": "value", "data": 7}
{"type": "value", "data": "lit\"q"}
{"type": "map", "data": {"@n": {"weftwl": 7}}}
"#
    );
    // Numbers a double cannot hold are strings in JSON; a time prints as text.
    let out = run_weft(
        &[
            "-q",
            "-f",
            "json",
            "-e",
            r#"BEGIN { print(10223372036854775807); print(strftime("%Y", nsecs)); }"#,
        ],
        Duration::from_secs(20),
    );
    let year: u32 = out
        .stdout
        .lines()
        .nth(1)
        .and_then(|l| {
            l.strip_prefix(r#"{"type": "value", "data": ""#)?
                .strip_suffix(r#""}"#)?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(year >= 2024, "{}", out.stdout);
    assert!(
        out.stdout
            .starts_with("{\"type\": \"value\", \"data\": \"10223372036854775807\"}\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn strcontains_on_paths_comm_and_literals() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_openat /pid == cpid && strcontains(str(args->filename), \"/dev/\")/ { \
           @[strcontains(str(args->filename), \"null\"), strcontains(str(args->filename), \"ll\"), \
             strcontains(str(args->filename), \"zero\"), strcontains(comm, \"wl\")] = count(); } \
         END { $nul = \"hello\\0world\"; $needle = \"wo\\0rld\"; \
           printf(\"%d %d %d\\n\", strlen($nul), strlen(\"\"), strlen(comm)); \
           printf(\"%d %d %d %d %d %d %d %d\\n\", strcontains(\"hello-test-world\", \"test\"), \
             strcontains(\"\", \"\"), strcontains(\"\", \"x\"), strcontains(\"ababac\", \"abac\"), \
             strcontains(\"Hello\", \"hello\"), strcontains(\"hello\", \"hello-longer\"), \
             strcontains($nul, \"world\"), strcontains(\"hello world\", $needle)); }",
        "openat /dev/null 3",
        &[],
    );
    // END's lines come before the maps printed at exit; its comm is weft's.
    assert_eq!(
        out.stdout,
        "5 0 4\n1 1 0 1 0 0 0 1\n\n\n@[true, true, false, true]: 3\n"
    );
}

#[test]
fn strcontains_of_two_longest_strings_loads() {
    require_root!();
    // Two 1 KiB strings (the default max_strlen): the starts are tried by
    // bpf_loop, whose callback the verifier walks once.
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_openat \
           /pid == cpid && strcontains(str(args->filename), \"/dev/null\")/ { \
           @[strcontains(str(args->filename), str(args->filename))] = count(); }",
        "openat /dev/null 3",
        &[],
    );
    assert_eq!(out.stdout, "\n\n@[true]: 3\n");
}

#[test]
fn strncmp_on_paths_comm_literals_and_lengths() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_openat /pid == cpid && strncmp(str(args->filename), \"/dev/\", 5) == 0/ { \
           @[strncmp(str(args->filename), \"/dev/zero\", 6), strncmp(\"/dev/nul\", str(args->filename), 8), \
             strncmp(comm, \"weftwl\", 99), strncmp(comm, \"weftwm\", 5)] = count(); } \
         END { $a = \"hello\"; $n = 4; $m = 5; \
           printf(\"%d %d %d %d %d %d %d\\n\", strncmp(\"hello\", \"hell\", 5), strncmp(\"hello\", \"hell\", 4), \
             strncmp(\"one\", \"one \", 4), strncmp(\"wow\", comm, 17), strncmp($a, \"help\", $n - 1), \
             strncmp($a, \"help\", $m - 1), strncmp(str($1), \"3\", $1)); }",
        "openat /dev/null 3",
        &["3"],
    );
    // END's line comes before the maps printed at exit.
    assert_eq!(out.stdout, "1 0 1 1 0 1 0\n\n\n@[1, 0, 0, 0]: 3\n");
}

/// Nanoseconds on the kernel's TAI clock, read from user space.
fn tai_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_TAI, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_TAI)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[test]
fn nsecs_clocks_and_jiffies() {
    require_root!();
    let before = tai_ns();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
           printf(\"%llu %llu %llu %llu %llu\\n\", nsecs(monotonic), nsecs, nsecs(boot), nsecs(tai), jiffies); }",
        "getppid 1 nanosleep 50000000 1 getppid 1",
        &[],
    );
    let after = tai_ns();
    let rows: Vec<Vec<u64>> = out
        .stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(' ').map(|n| n.parse().expect("a number")).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{}", out.stdout);
    for r in &rows {
        let [mono, plain, boot, tai, _] = r[..] else {
            panic!("{}", out.stdout)
        };
        assert!(mono <= plain && plain <= boot, "{}", out.stdout);
        assert!(
            (before..=after).contains(&tai),
            "TAI {tai} is not between the test's own reads {before}..{after}:\n{}",
            out.stdout
        );
    }
    // The 50 ms sleep between the two reads, by every clock.
    for (clock, (before, after)) in rows[0].iter().zip(&rows[1]).take(4).enumerate() {
        let gap = after - before;
        assert!(gap >= 50_000_000, "clock {clock}: {gap} ns\n{}", out.stdout);
    }
    assert!(
        rows[1][4] > rows[0][4],
        "jiffies did not move:\n{}",
        out.stdout
    );
}

#[test]
fn delete_says_whether_the_element_was_there() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
           @a[1] = 1; @b[1, 2] = 2; @s = 5; \
           $x = delete(@a, 2); $y = delete(@a, 1); delete(@b, (1, 2)); \
           @r[$x, $y, delete(@b, (1, 2)), !delete(@s), delete(@s)] = count(); }",
        "getppid 25",
        &[],
    );
    assert_eq!(out.stdout, "\n\n@r[false, true, false, false, false]: 25\n");
}

#[test]
fn len_and_has_key_follow_a_map() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_write /pid == cpid/ { \
           if (!has_key(@seen, args->count)) { @first = count(); } \
           @seen[args->count] = 1; @pair[args->count, comm] = 1; @len = len(@seen); \
           @r[has_key(@seen, args->count), has_key(@seen, 99), \
              has_key(@pair, (args->count, \"weftwl\")), has_key(@pair, (args->count, \"x\"))] = count(); } \
         tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { \
           delete(@seen, 2); @after = len(@seen); @pairs = len(@pair); clear(@seen); clear(@pair); }",
        "write 1 3 write 2 4 write 3 5 getppid 1",
        &[],
    );
    assert_eq!(
        out.stdout,
        "\n\n@after: 2\n@first: 3\n@len: 3\n@pairs: 3\n@r[true, false, true, false]: 12\n",
        "{}",
        out.stderr
    );
}

#[test]
fn pton_gives_the_bytes_ntop_prints() {
    require_root!();
    let out = run_weft(
        &[
            "-e",
            r#"BEGIN { $a = pton("10.1.2.3"); print($a); printf("%s %s %s %s\n", ntop(2, pton("127.0.0.1")), ntop(10, pton("::1")), ntop(pton("fe80::1:2")), ntop($a)); @[ntop(pton("192.168.0.255"))] = (uint32)pton("127.0.0.1"); }"#,
        ],
        Duration::from_secs(20),
    );
    assert_eq!(
        out.stdout,
        "[10,1,2,3]\n127.0.0.1 ::1 fe80::1:2 10.1.2.3\n\n\n@[192.168.0.255]: 16777343\n",
        "{}",
        out.stderr
    );
}

#[test]
fn strftime_values_are_kept_and_formatted() {
    require_root!();
    // A format without conversions prints the same whenever it runs; `%Y`
    // shows the value is formatted, not printed as nanoseconds. A key is the
    // time itself (as in bpftrace), so the counted key has a fixed time.
    let script = r#"tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { $t = strftime("at", nsecs); @k[strftime("at", 5)] = count(); @v[1] = strftime("<%Y>", nsecs); @tup = (7, $t); @s = $t; }"#;
    let out = trace_workload(script, "getppid 3", &[]);
    let year = |text: &str| -> u32 {
        let start = text.find('<').expect("a year") + 1;
        text[start..start + 4].parse().expect("a year")
    };
    assert!(year(&out.stdout) >= 2026, "{}", out.stdout);
    let shown = out
        .stdout
        .replace(&format!("<{}>", year(&out.stdout)), "<Y>");
    assert_eq!(
        shown, "\n\n@k[at]: 3\n@s: at\n@tup: (7, at)\n@v[1]: <Y>\n",
        "{}",
        out.stderr
    );
    let out = trace_workload(script, "getppid 1", &["-f", "json"]);
    let shown = out
        .stdout
        .replace(&format!("<{}>", year(&out.stdout)), "<Y>");
    assert_eq!(
        shown,
        r#"{"type": "map", "data": {"@k": {"at": 1}}}
{"type": "map", "data": {"@s": "at"}}
{"type": "map", "data": {"@tup": [7,"at"]}}
{"type": "map", "data": {"@v": {"1": "<Y>"}}}
"#
    );
}

#[test]
fn macaddr_of_an_address_a_member_and_a_value() {
    require_root!();
    // The path's first six bytes, then bytes 1..7 through a struct member.
    let out = trace_workload(
        "struct S { char skip; char m[6]; } \
         tracepoint:syscalls:sys_enter_openat /pid == cpid && str(args->filename) == \"/dev/null\"/ { \
           $s = (struct S *)args->filename; \
           @[macaddr(args->filename), macaddr($s->m), macaddr(pton(\"fe80::1:2\"))] = count(); \
           $m = macaddr($s->m); printf(\"%s\\n\", $m); }",
        "openat /dev/null 3",
        &[],
    );
    assert_eq!(
        out.stdout,
        "64:65:76:2F:6E:75\n".repeat(3)
            + "\n\n@[2F:64:65:76:2F:6E, 64:65:76:2F:6E:75, FE:80:00:00:00:00]: 3\n",
        "{}",
        out.stderr
    );
}

#[test]
fn container_of_moves_back_by_the_member_offset() {
    require_root!();
    let out = trace_workload(
        "struct P { long a; int b; char path[16]; } \
         tracepoint:syscalls:sys_enter_openat /pid == cpid && str(args->filename) == \"/dev/null\"/ { \
           $p = container_of(args->filename, typeof(struct P), path); \
           @[(uint64)args->filename - (uint64)$p, $p->path] = count(); }",
        "openat /dev/null 4",
        &[],
    );
    assert_eq!(out.stdout, "\n\n@[12, /dev/null]: 4\n", "{}", out.stderr);
}

/// How many CPUs /sys/devices/system/cpu/possible lists (`0-1,4`: 3).
fn possible_cpus() -> u64 {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/possible").expect("possible CPUs");
    text.trim()
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<u64>().unwrap() - a.parse::<u64>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

#[test]
fn ncpus_counts_the_possible_cpus() {
    require_root!();
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @[ncpus, __builtin_ncpus] = count(); }",
        "getppid 3",
        &[],
    );
    let n = possible_cpus();
    assert_eq!(out.stdout, format!("\n\n@[{n}, {n}]: 3\n"));
}

#[test]
fn usermode_by_probe_type() {
    require_root!();
    let wl = common::workload().display().to_string();
    let out = trace_workload(
        &format!(
            "BEGIN {{ printf(\"begin %d\\n\", usermode); }} \
             uprobe:{wl}:weft_workload_marker /pid == cpid/ {{ @u[usermode] = count(); }} \
             tracepoint:syscalls:sys_enter_getppid /pid == cpid/ {{ @t[usermode] = count(); }} \
             profile:hz:199 /pid == cpid/ {{ @p[usermode] = count(); }}"
        ),
        "call 4 getppid 3 spin 600",
        &[],
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "begin 1", "{}", out.stdout);
    assert!(
        out.stdout.contains("\n@t[0]: 3\n@u[1]: 4\n"),
        "{}",
        out.stdout
    );
    // The spin runs in user space: most samples say so.
    let count = |key: &str| -> u64 {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(key))
            .map_or(0, |n| n.parse().expect("a count"))
    };
    let (user, kernel) = (count("@p[1]: "), count("@p[0]: "));
    assert!(user >= 5 && user > 4 * kernel, "{}", out.stdout);
}

/// `ctx` is the context in every probe, as in bpftrace: in a tracepoint a
/// `void *` to the record, whose `__syscall_nr` (after the 8 bytes of common
/// fields) a script's own struct reads back as the kernel's number for
/// getppid (110 on x86-64), once per call of the workload. (uprobe.rs
/// reads a uprobe's `ctx` as its `struct pt_regs *`.)
#[test]
fn ctx_is_the_context_in_every_probe() {
    require_root!();
    let out = trace_workload(
        "struct enter { unsigned long common; int nr; } \
         tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @nr[((struct enter *)ctx)->nr] = count(); }",
        "getppid 3",
        &[],
    );
    assert_eq!(out.stdout.trim(), "@nr[110]: 3", "{}", out.stderr);
}
