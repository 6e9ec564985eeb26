//! Kernel tests of builtins on the workload, one behaviour each:
//!
//! - `numaid` is the NUMA node of the CPU each event fired on: every
//!   getppid of the workload is counted under a node this machine has.

mod common;

use common::trace_workload;

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
