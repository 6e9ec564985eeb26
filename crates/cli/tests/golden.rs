//! Kernel test: weft runs every script of `crates/output/tests/golden/`
//! and prints, in text and with `-f json`, byte for byte what bpftrace's
//! current release prints for it (`NAME.txt`, `NAME.json`: bpftrace 0.17's
//! output, made by `generate.sh` there, changed where the current release
//! prints differently, as the README there lists).
//! The scripts cover every value type weft and bpftrace share, as a map key
//! and as a value, every aggregation, emptied maps, printf conversions and
//! `cat()`. A script whose first line says `replay only` is checked through
//! weft's sinks alone (`crates/output/tests/golden.rs`); the line says why.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::run_weft;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../output/tests/golden")
}

/// The scripts weft runs, by name.
fn scripts() -> Vec<PathBuf> {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("the golden directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "bt"))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            !text.lines().next().unwrap_or("").contains("replay only")
        })
        .collect();
    scripts.sort();
    scripts
}

#[test]
fn weft_prints_what_bpftrace_printed_for_every_golden_script() {
    require_root!();
    let scripts = scripts();
    assert!(scripts.len() >= 10, "{scripts:?}");
    let mut differences = Vec::new();
    for script in &scripts {
        let path = script.display().to_string();
        for (flags, ext) in [(&[][..], "txt"), (&["-f", "json"][..], "json")] {
            let mut args: Vec<&str> = flags.to_vec();
            args.push(&path);
            let out = run_weft(&args, Duration::from_secs(30));
            let want = std::fs::read_to_string(script.with_extension(ext)).expect("golden output");
            if out.status != Some(0) || out.stdout != want {
                differences.push(format!(
                    "== {} ({ext}), exit {:?}\n--- bpftrace\n{want}\n--- weft\n{}\n--- weft's stderr\n{}",
                    script.file_name().unwrap_or_default().to_string_lossy(),
                    out.status,
                    out.stdout,
                    out.stderr
                ));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} outputs differ:\n{}",
        differences.len(),
        scripts.len() * 2,
        differences.join("\n")
    );
}
