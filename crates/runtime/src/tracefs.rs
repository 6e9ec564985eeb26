//! Finding (or mounting) tracefs and reading tracepoint descriptions from it.
//!
//! Where tracefs is mounted nowhere (as a fresh Debian boots), weft makes a
//! detached mount of its own ([`sys::detached_mount`]): no mount table shows
//! it, the process reaches its files through `/proc/self/fd/N`, and it is
//! gone with the descriptor, whatever ends the process. Every thread of the
//! process sees it (a test harness's too), and nothing else does.

use std::ffi::CString;
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use thiserror::Error;

use crate::error::SyscallError;
use crate::sys;

/// `TRACEFS_MAGIC` from `linux/magic.h`.
const TRACEFS_MAGIC: i64 = 0x7472_6163;
/// Where tracefs lives on modern systems.
pub const TRACEFS_PATH: &str = "/sys/kernel/tracing";
/// The legacy location under debugfs.
pub const DEBUGFS_TRACING_PATH: &str = "/sys/kernel/debug/tracing";

/// tracefs could not be found or mounted.
#[derive(Debug, Error, Clone)]
pub enum TracefsError {
    /// Not mounted, and a mount of weft's own could not be made.
    #[error("tracefs is not mounted and mounting it failed: {0}")]
    Mount(String),
}

/// A tracefs: one mounted on the system, or a detached mount of this
/// process's own, kept as long as any clone of this value lives.
#[derive(Debug, Clone)]
pub struct Tracefs {
    root: PathBuf,
    own_mount: Option<Arc<OwnedFd>>,
}

impl PartialEq for Tracefs {
    fn eq(&self, other: &Tracefs) -> bool {
        self.root == other.root
    }
}

impl Eq for Tracefs {}

/// Where it is, for messages: a system path, or that it is weft's own.
impl fmt::Display for Tracefs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.own_mount {
            None => write!(f, "{}", self.root.display()),
            Some(_) => f.write_str("weft's own detached mount, not on the system"),
        }
    }
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
            .map(|p| Tracefs {
                root: p.into(),
                own_mount: None,
            })
    }

    /// The mounted tracefs, or, when it is mounted nowhere, a detached
    /// mount of this process's own (see the module's docs): the system's
    /// mounts are never changed.
    pub fn find_or_mount() -> Result<Tracefs, TracefsError> {
        if let Some(t) = Tracefs::find() {
            return Ok(t);
        }
        Tracefs::mount_own()
    }

    /// A detached tracefs mount of this process's own, even where tracefs
    /// is mounted on the system.
    pub fn mount_own() -> Result<Tracefs, TracefsError> {
        let fd = sys::detached_mount(c"tracefs")?;
        let root = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        let t = Tracefs {
            root,
            own_mount: Some(Arc::new(fd)),
        };
        if !t.root.join("events").is_dir() {
            return Err(TracefsError::Mount(format!(
                "{} has no events directory",
                t.root.display()
            )));
        }
        Ok(t)
    }

    /// This is a detached mount of this process's own.
    pub fn is_own_mount(&self) -> bool {
        self.own_mount.is_some()
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
        Tracefs {
            root: root.into(),
            own_mount: None,
        }
    }

    /// The directory its files are under (`/proc/self/fd/N` for a mount of
    /// this process's own: valid in this process only).
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
