//! `[profile]` of the agent's configuration: a low-frequency CPU profile
//! of the whole host, written as a gzipped pprof file every `interval`
//! into `output` (`profile-UNIXTIME.pb.gz`, the newest `keep` kept).
//!
//! Each interval is one `weft profile -F HZ -d SECONDS -o FILE.pb.gz` run
//! of this same executable, one after another: the profiler's own sampling,
//! symbolization and pprof writer, with nothing of it duplicated here, and a
//! profile that fails (or crashes) cannot take the scripts with it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::config::ProfileConfig;

/// A running profile, stopped (its current interval ended early and
/// written) when dropped.
pub struct Profile {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Profile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts the profile of `config`.
pub fn start(config: &ProfileConfig) -> Result<Profile, String> {
    std::fs::create_dir_all(&config.output)
        .map_err(|e| format!("cannot make {}: {e}", config.output.display()))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find weft itself: {e}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let config = config.clone();
    let thread = std::thread::Builder::new()
        .name("weft-profile".into())
        .spawn(move || run(&exe, &config, &stopping))
        .map_err(|e| format!("cannot start its thread: {e}"))?;
    Ok(Profile {
        stop,
        thread: Some(thread),
    })
}

fn run(exe: &Path, config: &ProfileConfig, stop: &AtomicBool) {
    let mut said_failure = false;
    while !stop.load(Ordering::SeqCst) {
        let started = Instant::now();
        let name = format!(
            "profile-{}.pb.gz",
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        );
        let file = config.output.join(name);
        let seconds = format!("{:.3}", config.interval.as_secs_f64());
        let child = Command::new(exe)
            .args([
                "profile",
                "-q",
                "-F",
                &config.frequency.to_string(),
                "-d",
                &seconds,
                "-o",
            ])
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        let ok = match child {
            Ok(child) => finish(child, config.interval, stop),
            Err(e) => Err(format!("cannot run weft profile: {e}")),
        };
        match ok {
            Ok(()) => {
                said_failure = false;
                prune(&config.output, config.keep);
            }
            Err(e) => {
                if !said_failure {
                    eprintln!("weft agent: [profile]: {e}");
                    said_failure = true;
                }
                // Not in a tight loop: wait out the rest of the interval.
                while started.elapsed() < config.interval && !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }
}

/// Waits for one interval's profiler (SIGINT when the agent stops, which
/// writes what it has); the error is its first line of stderr.
fn finish(mut child: Child, interval: Duration, stop: &AtomicBool) -> Result<(), String> {
    let deadline = Instant::now() + interval + Duration::from_secs(60);
    let mut interrupted = false;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            if status.success() {
                return Ok(());
            }
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            let line = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            return Err(format!("weft profile failed ({status}): {line}"));
        }
        if stop.load(Ordering::SeqCst) && !interrupted {
            runtime::process::interrupt(&child);
            interrupted = true;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err("weft profile did not finish in time".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Keeps the newest `keep` profiles of `dir`.
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("profile-") && n.ends_with(".pb.gz"))
        })
        .collect();
    // The names hold the Unix time: their order is their age.
    files.sort();
    let excess = files.len().saturating_sub(keep);
    for old in &files[..excess] {
        let _ = std::fs::remove_file(old);
    }
}
