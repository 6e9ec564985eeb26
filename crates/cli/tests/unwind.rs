//! User stacks unwound with DWARF call-frame information (`weft profile` and
//! `weft offcpu` by default), against `perf record --call-graph dwarf` on
//! the same programs: C built `-O2` without frame pointers (compiled here
//! with gcc into a temporary directory), through libm and libc, which Debian
//! builds without frame pointers too.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{must_succeed, run, run_weft};

const TIMEOUT: Duration = Duration::from_secs(90);

/// A call chain of five functions below `main`, a leaf calling libm; it
/// spins for the CPU seconds given (so a loaded machine still gives the
/// samples).
const CHAIN_C: &str = r#"
#include <math.h>
#include <stdlib.h>
#include <time.h>
volatile double sink;
__attribute__((noinline)) double leaf_math(double x) {
    double s = 0;
    for (int i = 0; i < 2000; i++) s += sin(x + i) * cos(x - i);
    return s;
}
__attribute__((noinline)) double stage5(double x) { double r = leaf_math(x); sink = r; return r + 1; }
__attribute__((noinline)) double stage4(double x) { double r = stage5(x * 1.1); sink = r; return r + 2; }
__attribute__((noinline)) double stage3(double x) { double r = stage4(x * 1.2); sink = r; return r + 3; }
__attribute__((noinline)) double stage2(double x) { double r = stage3(x * 1.3); sink = r; return r + 4; }
__attribute__((noinline)) double stage1(double x) { double r = stage2(x * 1.4); sink = r; return r + 5; }
int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 1;
    struct timespec t;
    double total = 0;
    do {
        for (int i = 0; i < 20; i++) total += stage1(i);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    } while (t.tv_sec + t.tv_nsec / 1e9 < secs);
    sink = total;
    return 0;
}
"#;

/// Blocks in libc's `nanosleep` from a named function three levels deep.
const BLOCK_C: &str = r#"
#include <stdlib.h>
#include <time.h>
volatile int sink;
__attribute__((noinline)) void sleepy_wait(void) {
    struct timespec t = {0, 10000000};
    nanosleep(&t, NULL);
    sink++;
}
__attribute__((noinline)) void level2(void) { sleepy_wait(); sink++; }
__attribute__((noinline)) void level1(void) { level2(); sink++; }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20;
    for (int i = 0; i < n; i++) level1();
    return 0;
}
"#;

const CHAIN: &str = "main;stage1;stage2;stage3;stage4;stage5;leaf_math";

/// A temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("weft-unwind-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tools_present() {
    for tool in ["gcc", "perf"] {
        testgate::require!(
            Command::new(tool).arg("--version").output().is_ok(),
            &format!("{tool} is not installed (scripts/setup.sh installs it)")
        );
    }
}

/// Compiles `source` with `-O2 -fomit-frame-pointer` into `dir`.
fn build(dir: &TempDir, name: &str, source: &str) -> PathBuf {
    let c = dir.path(&format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let exe = dir.path(name);
    let o = run(
        Command::new("gcc")
            .args(["-O2", "-fomit-frame-pointer", "-o"])
            .arg(&exe)
            .arg(&c)
            .arg("-lm"),
        TIMEOUT,
    );
    assert_eq!(o.status, Some(0), "gcc failed: {}", o.stderr);
    exe
}

/// `stack -> weight` of a folded file.
fn folded(path: &Path) -> HashMap<String, u64> {
    std::fs::read_to_string(path)
        .expect("folded output")
        .lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            Some((stack.to_string(), n.parse().ok()?))
        })
        .collect()
}

/// `perf script`'s samples of `comm` as root-first folded stacks (user
/// frames only, offsets and modules gone), with their counts.
fn perf_stacks(data: &Path, comm: &str) -> HashMap<String, u64> {
    let o = run(
        perf().args(["script", "-F", "comm,ip,sym", "-i"]).arg(data),
        TIMEOUT,
    );
    must_succeed(&o, "perf script");
    let mut out = HashMap::new();
    for block in o.stdout.split("\n\n") {
        let mut lines = block.lines().filter(|l| !l.trim().is_empty());
        let Some(head) = lines.next() else { continue };
        if head.split_whitespace().next() != Some(comm) {
            continue;
        }
        let mut frames: Vec<String> = lines
            .filter_map(|l| {
                let mut words = l.split_whitespace();
                let addr = words.next()?;
                // Kernel frames are left out: weft's user part is compared.
                if addr.starts_with("ffffffff") {
                    return None;
                }
                let sym = words.next().unwrap_or("[unknown]");
                Some(sym.split('+').next().unwrap_or(sym).to_string())
            })
            .collect();
        frames.reverse();
        *out.entry(frames.join(";")).or_insert(0) += 1;
    }
    out
}

fn share(stacks: &HashMap<String, u64>, pred: impl Fn(&str) -> bool) -> f64 {
    let all: u64 = stacks.values().sum();
    let hit: u64 = stacks.iter().filter(|(s, _)| pred(s)).map(|(_, n)| n).sum();
    hit as f64 / all.max(1) as f64
}

/// The chain down to a libm function (`sin`/`cos`, as glibc names its
/// variants: `__sin_fma`).
fn chain_into_libm(stack: &str) -> bool {
    stack.split_once(CHAIN).is_some_and(|(_, rest)| {
        rest.strip_prefix(';')
            .is_some_and(|leaf| leaf.contains("sin") || leaf.contains("cos"))
    })
}

#[test]
fn profile_stacks_through_code_without_frame_pointers_match_perf_dwarf() {
    require_root!();
    tools_present();
    let dir = TempDir::new("chain");
    let exe = build(&dir, "chain", CHAIN_C);
    let out = dir.path("weft.folded");
    let cmd = format!("{} 1", exe.display());
    let o = run_weft(
        &[
            "profile",
            "-F",
            "499",
            "-U",
            "-c",
            &cmd,
            "-o",
            out.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    must_succeed(&o, "weft profile");
    let weft: HashMap<String, u64> = folded(&out)
        .into_iter()
        .filter_map(|(s, n)| Some((s.strip_prefix("chain;")?.to_string(), n)))
        .collect();
    let data = dir.path("perf.data");
    let p = run(
        perf()
            .args([
                "record",
                "-q",
                "-F",
                "499",
                "-e",
                "cpu-clock",
                "--call-graph",
                "dwarf",
                "-o",
            ])
            .arg(&data)
            .arg("--")
            .arg(&exe)
            .arg("1"),
        TIMEOUT,
    );
    must_succeed(&p, "perf record");
    let perf = perf_stacks(&data, "chain");
    let samples: u64 = weft.values().sum();
    assert!(
        samples >= 300,
        "{samples} samples of 1 s at 499 Hz\n{weft:#?}"
    );
    let perf_chain = share(&perf, |s| s.contains(CHAIN));
    let weft_chain = share(&weft, |s| s.contains(CHAIN));
    assert!(
        perf_chain > 0.9,
        "perf: {perf_chain:.3} of samples in the chain\n{perf:#?}"
    );
    assert!(
        weft_chain >= 0.95 * perf_chain,
        "the chain main..leaf_math in {weft_chain:.3} of weft's samples, {perf_chain:.3} of perf's\n{weft:#?}"
    );
    // The libm leaf keeps its caller (a frame-pointer walk loses it).
    let perf_libm = share(&perf, chain_into_libm);
    let weft_libm = share(&weft, chain_into_libm);
    assert!(perf_libm > 0.2, "perf: {perf_libm:.3} in libm\n{perf:#?}");
    assert!(
        weft_libm >= 0.95 * perf_libm - 0.05,
        "chain;libm in {weft_libm:.3} of weft's samples, {perf_libm:.3} of perf's\n{weft:#?}"
    );
    // Every stack starts at the program's entry, or ends marked as cut.
    let rooted = share(&weft, |s| {
        s.starts_with("_start;") || s.ends_with("[truncated]")
    });
    assert!(rooted > 0.99, "{rooted:.3} rooted\n{weft:#?}");
}

/// `perf`, in a mount namespace of its own: perf mounts tracefs where it
/// finds none (to read a tracepoint's format), and that mount goes with it,
/// so the host is left as found however perf ends.
fn perf() -> Command {
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "perf"]);
    cmd
}

#[test]
fn offcpu_stacks_name_the_function_that_blocked_in_libc() {
    require_root!();
    tools_present();
    let dir = TempDir::new("block");
    let exe = build(&dir, "block", BLOCK_C);
    let out = dir.path("weft.folded");
    let cmd = format!("{} 20", exe.display());
    let o = run_weft(
        &["offcpu", "-U", "-c", &cmd, "-o", out.to_str().unwrap()],
        TIMEOUT,
    );
    must_succeed(&o, "weft offcpu");
    let weft = folded(&out);
    let sleeping: HashMap<&String, &u64> = weft
        .iter()
        .filter(|(s, _)| s.ends_with("clock_nanosleep"))
        .collect();
    assert!(!sleeping.is_empty(), "{weft:#?}");
    let blocked: u64 = sleeping.values().copied().sum();
    // 20 sleeps of 10 ms: at least 200 ms, all of it below sleepy_wait.
    assert!(blocked >= 200_000, "{blocked} us\n{weft:#?}");
    for stack in sleeping.keys() {
        assert!(
            stack.contains("main;level1;level2;sleepy_wait;"),
            "the blocking function is missing: {stack}\n{weft:#?}"
        );
    }
    // perf's own sched_switch stacks say the same.
    let data = dir.path("perf.data");
    let p = run(
        perf()
            .args([
                "record",
                "-q",
                "-e",
                "sched:sched_switch",
                "--call-graph",
                "dwarf",
                "-o",
            ])
            .arg(&data)
            .arg("--")
            .arg(&exe)
            .arg("5"),
        TIMEOUT,
    );
    must_succeed(&p, "perf record");
    let perf = perf_stacks(&data, "block");
    let perf_sleeps: Vec<&String> = perf
        .keys()
        .filter(|s| s.ends_with("clock_nanosleep"))
        .collect();
    assert!(!perf_sleeps.is_empty(), "{perf:#?}");
    assert!(
        perf_sleeps
            .iter()
            .all(|s| s.contains("level2;sleepy_wait;")),
        "{perf:#?}"
    );
}
