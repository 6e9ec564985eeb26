//! The benchmark harness runs in its smoke mode so it cannot rot. Its
//! timings are not asserted (they belong to `bench/run`, not the tests).

mod common;

use std::time::Duration;

#[test]
fn bench_harness_smoke_mode_runs_every_measure_for_weft() {
    require_root!();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out_file = common::scratch("bench.md");
    let weft = common::weft();
    let workload = common::workload();
    let out = common::run(
        std::process::Command::new("python3")
            .current_dir(&root)
            .args([
                "bench/run",
                "--quick",
                "--tools",
                "weft",
                "--weft",
                weft.to_str().unwrap(),
                "--workload",
                workload.to_str().unwrap(),
                "--out",
                out_file.to_str().unwrap(),
            ]),
        Duration::from_secs(300),
    );
    assert!(
        !out.timed_out,
        "bench/run --quick timed out\n{}",
        out.stderr
    );
    assert_eq!(
        out.status,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    let table = std::fs::read_to_string(&out_file).unwrap();
    for section in [
        "## Startup, 1 probe",
        "## Per-event overhead",
        "## Per-event overhead, user probes",
        "## Streaming",
        "## Soak",
        "## Compile only",
        "## On-CPU profile: 2 s at 99 Hz",
        "## Off-CPU",
        "## Binary",
    ] {
        assert!(table.contains(section), "missing {section}:\n{table}");
    }
    assert!(!table.contains("fail:"), "a weft case failed:\n{table}");
    // The soak accounts for every event; --stats figures stand beside the
    // per-event cases.
    assert!(
        table.contains("| delivered + reported lost = generated |  | exact |"),
        "{table}"
    );
    assert!(table.contains("weft --stats: overhead"), "{table}");
    let _ = std::fs::remove_file(out_file);
}
