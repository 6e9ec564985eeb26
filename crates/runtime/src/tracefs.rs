//! Finding (or mounting) tracefs and reading tracepoint descriptions from it.

use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use thiserror::Error;

use crate::error::SyscallError;
use crate::sys;

/// tracefs was mounted by this process in the namespace it shares with
/// others: unmount it at exit.
static MOUNTED_HERE: AtomicBool = AtomicBool::new(false);

/// `TRACEFS_MAGIC` from `linux/magic.h`.
const TRACEFS_MAGIC: i64 = 0x7472_6163;
/// Where tracefs lives on modern systems; we mount it there when it is missing.
pub const TRACEFS_PATH: &str = "/sys/kernel/tracing";
/// The legacy location under debugfs.
pub const DEBUGFS_TRACING_PATH: &str = "/sys/kernel/debug/tracing";

/// tracefs could not be found or mounted.
#[derive(Debug, Error, Clone)]
pub enum TracefsError {
    /// Not mounted, and mounting it at [`TRACEFS_PATH`] failed.
    #[error("tracefs is not mounted and mounting it at {TRACEFS_PATH} failed: {0}")]
    Mount(String),
}

/// A mounted tracefs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracefs {
    root: PathBuf,
}

fn is_tracefs(path: &str) -> bool {
    let c = CString::new(path).expect("static path");
    sys::fs_type(&c) == Some(TRACEFS_MAGIC)
}

impl Tracefs {
    /// The tracefs already mounted at [`TRACEFS_PATH`] or [`DEBUGFS_TRACING_PATH`], if any.
    /// Never mounts anything.
    pub fn find() -> Option<Tracefs> {
        [TRACEFS_PATH, DEBUGFS_TRACING_PATH]
            .into_iter()
            .find(|p| is_tracefs(p))
            .map(|p| Tracefs { root: p.into() })
    }

    /// The mounted tracefs, mounting it at [`TRACEFS_PATH`] when it is
    /// nowhere. The system is left as found: the mount is made in a mount
    /// namespace of weft's own, so it goes with weft however weft ends
    /// (SIGKILL included); where that cannot be (a process with threads
    /// already), it is made where it is and [`Tracefs::unmount_ours`]
    /// takes it away at exit.
    pub fn find_or_mount() -> Result<Tracefs, TracefsError> {
        if let Some(t) = Tracefs::find() {
            return Ok(t);
        }
        let private = sys::private_mount_namespace().is_ok();
        let mounted = sys::mount(c"nodev", c"/sys/kernel/tracing", c"tracefs");
        match mounted {
            Ok(()) if !private => MOUNTED_HERE.store(true, Ordering::SeqCst),
            Ok(()) => {}
            // EBUSY: someone mounted it concurrently.
            Err(e) if e.errno() == Some(libc::EBUSY) => {}
            Err(e) => return Err(TracefsError::Mount(e.to_string())),
        }
        Tracefs::find().ok_or_else(|| TracefsError::Mount("still not tracefs after mount".into()))
    }

    /// Unmounts the tracefs [`Tracefs::find_or_mount`] mounted outside a
    /// namespace of its own, if it did (call once at exit).
    pub fn unmount_ours() {
        if MOUNTED_HERE.swap(false, Ordering::SeqCst) {
            let _ = sys::unmount(c"/sys/kernel/tracing");
        }
    }

    /// The process-wide tracefs, found or mounted once and then remembered.
    pub fn shared() -> Result<&'static Tracefs, TracefsError> {
        static SHARED: OnceLock<Result<Tracefs, TracefsError>> = OnceLock::new();
        SHARED
            .get_or_init(Tracefs::find_or_mount)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A tracefs rooted elsewhere (tests).
    pub fn at(root: impl Into<PathBuf>) -> Tracefs {
        Tracefs { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn event_file(&self, category: &str, name: &str, file: &str) -> io::Result<PathBuf> {
        let bad = |s: &str| s.is_empty() || s.contains('/') || s.starts_with('.');
        if bad(category) || bad(name) {
            return Err(io::Error::from_raw_os_error(libc::ENOENT));
        }
        Ok(self
            .root
            .join("events")
            .join(category)
            .join(name)
            .join(file))
    }

    /// The text of `events/<category>/<name>/format`.
    pub fn format(&self, category: &str, name: &str) -> io::Result<String> {
        std::fs::read_to_string(self.event_file(category, name, "format")?)
    }

    /// The numeric id of a tracepoint (`events/<category>/<name>/id`), for `perf_event_open`.
    pub fn id(&self, category: &str, name: &str) -> io::Result<u64> {
        let text = std::fs::read_to_string(self.event_file(category, name, "id")?)?;
        text.trim()
            .parse()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "malformed tracepoint id"))
    }

    /// Every tracepoint as `(category, name)`, sorted and deduplicated: from
    /// `available_events`, or by walking `events/` when that cannot be read.
    pub fn tracepoints(&self) -> io::Result<Vec<(String, String)>> {
        let mut out = match std::fs::read_to_string(self.root.join("available_events")) {
            Ok(text) => parse_available_events(&text),
            Err(_) => self.walk_events()?,
        };
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn walk_events(&self) -> io::Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for cat in std::fs::read_dir(self.root.join("events"))? {
            let cat = cat?;
            if !cat.file_type()?.is_dir() {
                continue;
            }
            for ev in std::fs::read_dir(cat.path())? {
                let ev = ev?;
                if ev.path().join("format").exists() {
                    out.push((
                        cat.file_name().to_string_lossy().into_owned(),
                        ev.file_name().to_string_lossy().into_owned(),
                    ));
                }
            }
        }
        Ok(out)
    }
}

/// Parses `available_events` (`category:name` per line).
pub fn parse_available_events(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.trim().split_once(':'))
        .map(|(c, n)| (c.to_string(), n.to_string()))
        .collect()
}

impl From<SyscallError> for TracefsError {
    fn from(e: SyscallError) -> TracefsError {
        TracefsError::Mount(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_events_are_split_on_the_first_colon() {
        let v = parse_available_events("syscalls:sys_enter_read\nsched:sched_switch\n\n");
        assert_eq!(
            v,
            [
                ("syscalls".to_string(), "sys_enter_read".to_string()),
                ("sched".to_string(), "sched_switch".to_string())
            ]
        );
    }

    #[test]
    fn names_with_slashes_are_not_found() {
        let t = Tracefs::at("/nonexistent");
        let e = t.format("../..", "x").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    }
}
