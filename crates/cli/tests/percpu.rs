//! Kernel test of `percpu_kaddr` (issue 14). The BPF verifier finds a
//! per-CPU variable's address by name in kallsyms, which lists data symbols
//! only in kernels built with `CONFIG_KALLSYMS_ALL`. On such a kernel the
//! run CPU 0's run queue and process count; on one without (as this
//! machine's), weft stops before loading with one sentence naming what the
//! kernel lacks, and a non-zero status.

mod common;

use std::time::Duration;

use common::run_weft;

const SCRIPT: &str = "begin { printf(\"processes: %d\\n\", *percpu_kaddr(\"process_counts\", 0)); \
     $rq = (struct rq *)percpu_kaddr(\"runqueues\", 0); if ($rq != 0) { printf(\"nr_running: %d\\n\", $rq.nr_running); } \
     if (*percpu_kaddr(\"process_counts\") == *percpu_kaddr(\"process_counts\", cpu)) { printf(\"same\\n\"); } }";

#[test]
fn percpu_kaddr_reads_the_variable_or_says_what_the_kernel_lacks() {
    require_root!();
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").expect("read /proc/kallsyms");
    let listed = kallsyms.lines().any(|l| l.ends_with(" runqueues"));
    let out = run_weft(&["-q", "-e", SCRIPT], Duration::from_secs(30));
    if listed {
        assert_eq!(out.status, Some(0), "{}", out.stderr);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert!(lines[0].starts_with("processes: "), "{}", out.stdout);
        assert!(lines[1].starts_with("nr_running: "), "{}", out.stdout);
        assert_eq!(lines[2], "same", "{}", out.stdout);
    } else {
        assert_eq!(out.status, Some(1), "{}\n{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains(
                "ERROR: percpu_kaddr(\"process_counts\") cannot work on this kernel: it does not list `process_counts` in /proc/kallsyms, where the BPF verifier looks up a per-CPU variable's address (data symbols are listed only in kernels built with CONFIG_KALLSYMS_ALL)"
            ),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("CODE: E0494"), "{}", out.stderr);
        assert_eq!(out.stdout, "");
    }
}
