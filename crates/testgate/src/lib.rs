//! The one gate for tests that need root, a kernel feature or an installed
//! tool.
//!
//! A gated test that cannot run here returns early with the reason on
//! stderr, except when `CI` is set or `WEFT_KERNEL_TESTS=1` (`.ci/run` sets
//! it): then it fails, so a kernel test never reports success without having
//! run. Every decision is appended to `target/kernel-tests.log`, one line per
//! gate (`crate`, test, `ran`/`skipped`/`not-applicable`, reason), and
//! `scripts/kernel-tests-summary.sh` prints how many kernel tests ran.
//!
//! - [`require_root!`]: a kernel test (loads or attaches BPF programs).
//! - [`require!`]: something this machine must have for the test (BTF, C
//!   headers, an installed tool) that `scripts/setup.sh` provides in CI.
//! - [`only_if!`]: the test covers one of two kinds of kernel (one with
//!   kprobes, one without); on the other kind it does not apply, which is
//!   not a failure.

#![forbid(unsafe_code)]

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// Returns from the calling test unless running as root (CAP_BPF,
/// CAP_PERFMON); fails instead of returning when kernel tests are required.
#[macro_export]
macro_rules! require_root {
    () => {
        if !$crate::root(env!("CARGO_PKG_NAME")) {
            return;
        }
    };
}

/// Returns from the calling test when `$met` is false, saying `$missing`;
/// fails instead when kernel tests are required.
#[macro_export]
macro_rules! require {
    ($met:expr, $missing:expr) => {
        if !$crate::requirement(env!("CARGO_PKG_NAME"), $met, $missing) {
            return;
        }
    };
}

/// Returns from the calling test when `$applies` is false: the test is for
/// another kind of kernel or machine (`$why` says which). Never a failure.
#[macro_export]
macro_rules! only_if {
    ($applies:expr, $why:expr) => {
        if !$crate::applies(env!("CARGO_PKG_NAME"), $applies, $why) {
            return;
        }
    };
}

/// Whether a gated test that cannot run must fail (`CI` set, or
/// `WEFT_KERNEL_TESTS=1`).
pub fn required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var("WEFT_KERNEL_TESTS").is_ok_and(|v| v == "1")
}

/// The gate of [`require_root!`]: true when the test can run.
#[track_caller]
pub fn root(krate: &str) -> bool {
    let is_root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    requirement(
        krate,
        is_root,
        "kernel tests need root (CAP_BPF, CAP_PERFMON)",
    )
}

/// The gate of [`require!`]: true when the test can run.
#[track_caller]
pub fn requirement(krate: &str, met: bool, missing: &str) -> bool {
    let outcome = outcome(met, required());
    record(krate, outcome.as_str(), if met { "" } else { missing });
    match outcome {
        Outcome::Ran => true,
        Outcome::Skipped => {
            eprintln!("skipped: {missing}");
            false
        }
        Outcome::Failed => panic!(
            "this test cannot run here: {missing} (kernel tests are required: CI or WEFT_KERNEL_TESTS=1)"
        ),
    }
}

/// What a gate does with a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ran,
    Skipped,
    Failed,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Ran => "ran",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
        }
    }
}

/// A test whose requirement is not met skips, unless tests are required.
fn outcome(met: bool, required: bool) -> Outcome {
    match (met, required) {
        (true, _) => Outcome::Ran,
        (false, false) => Outcome::Skipped,
        (false, true) => Outcome::Failed,
    }
}

/// The gate of [`only_if!`]: true when the test applies here.
pub fn applies(krate: &str, applies: bool, why: &str) -> bool {
    if !applies {
        record(krate, "not-applicable", why);
        eprintln!("not applicable here: {why}");
    }
    applies
}

/// The test's name: libtest runs each test on a thread named after it.
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_string()
}

/// Appends one decision to the log; a log that cannot be written never
/// changes a test's outcome.
fn record(krate: &str, status: &str, reason: &str) {
    let Some(path) = log_path() else {
        return;
    };
    let line = format!("{krate}\t{}\t{status}\t{reason}\n", test_name());
    // One write of one short line to a file opened for appending: lines of
    // tests running in parallel do not interleave.
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// `WEFT_KERNEL_TESTS_LOG`, or `kernel-tests.log` in the cargo target
/// directory that holds the running test binary (the one with `CACHEDIR.TAG`).
fn log_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("WEFT_KERNEL_TESTS_LOG") {
        return Some(p.into());
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .find(|d| d.join("CACHEDIR.TAG").is_file())
        .map(|target| target.join("kernel-tests.log"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unmet_requirement_fails_only_when_required() {
        assert_eq!(outcome(true, true), Outcome::Ran);
        assert_eq!(outcome(true, false), Outcome::Ran);
        assert_eq!(outcome(false, false), Outcome::Skipped);
        assert_eq!(outcome(false, true), Outcome::Failed);
    }

    #[test]
    fn the_log_names_the_running_test() {
        // libtest runs each test on a thread named after it.
        assert_eq!(test_name(), "tests::the_log_names_the_running_test");
    }
}
