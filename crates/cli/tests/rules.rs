//! The workspace's rules, checked rather than hoped for:
//!
//! - only `runtime` (and the workload, the program the kernel tests trace)
//!   depends on libbpf-rs or libc, directly or through another crate (from
//!   `cargo metadata`; tests may use libc to fork and signal what they trace);
//! - each crate depends only on crates before it in the pipeline;
//! - every crate but `runtime` and the workload forbids `unsafe` code, in
//!   its library and in its binary;
//! - each diagnostic code of `source::Code` is used by exactly one
//!   constructor, and no code is written as a bare string.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The pipeline, in dependency order: a crate may depend only on crates
/// before it. `testgate` (the kernel-test gate) and `workload` stand apart.
const PIPELINE: &[&str] = &[
    "source", "syntax", "ktypes", "abi", "uelf", "sema", "codegen", "output", "runtime", "tracer",
    "export", "weft",
];

/// The crates that make syscalls: the only ones that may use libc or libbpf.
const SYSCALL_CRATES: &[&str] = &["runtime", "workload"];

/// Crates that give access to the kernel.
const SYSCALL_LIBRARIES: &[&str] = &["libc", "libbpf-rs", "libbpf-sys"];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().expect("rustc -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host")
}

/// The resolved graph: package id → name, package id → the ids of its
/// normal and build dependencies, and the workspace's members.
struct Graph {
    names: BTreeMap<String, String>,
    deps: BTreeMap<String, Vec<String>>,
    members: Vec<String>,
}

/// `cargo metadata` for this platform: package id → name, and each
/// package's normal and build dependencies (ids).
fn dependency_graph() -> Graph {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--filter-platform"])
        .arg(host_triple())
        .current_dir(workspace_root())
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let names: BTreeMap<String, String> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap().to_string(),
                p["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut deps = BTreeMap::new();
    for node in meta["resolve"]["nodes"].as_array().unwrap() {
        let shipped: Vec<String> = node["deps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["kind"].is_null() || k["kind"] == "build")
            })
            .map(|d| d["pkg"].as_str().unwrap().to_string())
            .collect();
        deps.insert(node["id"].as_str().unwrap().to_string(), shipped);
    }
    let members = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    Graph {
        names,
        deps,
        members,
    }
}

/// Every package `id` depends on, directly or not (normal and build).
fn reachable(id: &str, deps: &BTreeMap<String, Vec<String>>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![id.to_string()];
    while let Some(next) = todo.pop() {
        for d in deps.get(&next).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn only_runtime_reaches_the_kernel() {
    let Graph {
        names,
        deps,
        members,
    } = dependency_graph();
    let runtime_at = PIPELINE.iter().position(|c| *c == "runtime").unwrap();
    let mut wrong = Vec::new();
    for id in &members {
        let name = &names[id];
        if SYSCALL_CRATES.contains(&name.as_str()) {
            continue;
        }
        // The stages before runtime reach no syscall library at all; the
        // crates above it reach them only through runtime (and what their
        // own libraries need: inferno's hash maps seed from getrandom).
        let before_runtime = PIPELINE
            .iter()
            .position(|c| c == name)
            .is_some_and(|at| at < runtime_at);
        let looked_at = if before_runtime {
            reachable(id, &deps)
        } else {
            deps[id].iter().cloned().collect()
        };
        for d in looked_at {
            if SYSCALL_LIBRARIES.contains(&names[&d].as_str()) {
                wrong.push(format!("{name} depends on {}", names[&d]));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The rule is not vacuous: the crate that makes syscalls does reach them.
    for id in &members {
        if names[id] == "runtime" {
            let reached: BTreeSet<&str> = reachable(id, &deps)
                .iter()
                .map(|d| names[d].as_str())
                .collect();
            assert!(reached.contains("libbpf-rs") && reached.contains("libc"));
        }
    }
}

#[test]
fn crates_depend_only_on_earlier_pipeline_stages() {
    let Graph {
        names,
        deps,
        members,
    } = dependency_graph();
    let member_names: BTreeSet<&str> = members.iter().map(|m| names[m].as_str()).collect();
    let mut wrong = Vec::new();
    for id in &members {
        let name = names[id].as_str();
        let position = PIPELINE.iter().position(|c| *c == name);
        for d in &deps[id] {
            let dep = names[d].as_str();
            if !member_names.contains(dep) {
                continue;
            }
            let allowed = match (position, PIPELINE.iter().position(|c| *c == dep)) {
                (Some(me), Some(it)) => it < me,
                // testgate and workload depend on nothing of weft's.
                _ => false,
            };
            if !allowed {
                wrong.push(format!("{name} depends on {dep}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn crates_without_syscalls_forbid_unsafe_code() {
    let crates = workspace_root().join("crates");
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if ["runtime", "workload"].contains(&name.as_str()) {
            continue;
        }
        // Each crate root: the library and the binary, where there are.
        for root in ["src/lib.rs", "src/main.rs"] {
            let root = dir.join(root);
            let Ok(text) = std::fs::read_to_string(&root) else {
                continue;
            };
            assert!(
                text.lines().any(|l| l.trim() == "#![forbid(unsafe_code)]"),
                "{}: only runtime makes syscalls; every other crate forbids unsafe code",
                root.display()
            );
            checked.push(name.clone());
        }
    }
    assert!(checked.len() >= 9, "only {checked:?} checked");
    assert!(
        checked.iter().any(|c| c == "cli"),
        "the weft binary is checked"
    );
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn each_diagnostic_code_belongs_to_one_constructor() {
    let mut uses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut bare = Vec::new();
    let crates = workspace_root().join("crates");
    for krate in std::fs::read_dir(&crates).unwrap() {
        let mut files = Vec::new();
        rust_files(&krate.unwrap().path().join("src"), &mut files);
        for file in files {
            if file.ends_with("source/src/codes.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let shown = file.strip_prefix(&crates).unwrap().display().to_string();
            for (at, _) in text.match_indices("Code::E") {
                let code = &text[at + 6..(at + 11).min(text.len())];
                if code.len() < 5 || !code[1..].bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                uses.entry(code.to_string())
                    .or_default()
                    .push(shown.clone());
            }
            for (at, _) in text.match_indices("with_code(\"") {
                let line = text[..at].lines().count();
                bare.push(format!("{shown}:{line}"));
            }
        }
    }
    assert!(bare.is_empty(), "codes come from source::Code: {bare:?}");
    let mut wrong = Vec::new();
    for code in source::Code::ALL {
        match uses.get(code.as_str()).map(Vec::len) {
            Some(1) => {}
            Some(n) => wrong.push(format!(
                "{code} is used {n} times: {:?}",
                uses[code.as_str()]
            )),
            None => wrong.push(format!("{code} ({}) is used nowhere", code.title())),
        }
    }
    for code in uses.keys() {
        if source::Code::lookup(code).is_none() {
            wrong.push(format!("{code} is not in the table"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
