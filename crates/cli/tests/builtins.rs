//! Kernel tests of builtins on the workload, one behaviour each:
//!
//! - `numaid` is the NUMA node of the CPU each event fired on: every
//!   getppid of the workload is counted under a node this machine has.
//! - `print(value)` prints a variable, a tuple, a builtin, a map element,
//!   a literal and a time on a line each, in text and JSON, as bpftrace's
//!   current release does.

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
