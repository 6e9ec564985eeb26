//! A cgroup id (what `bpf_get_current_cgroup_id` gives: the inode number
//! of the cgroup's directory in the cgroup v2 hierarchy) as its path, for
//! the `process.linux.cgroup` attribute of spans.
//!
//! The hierarchy is walked once and again when an unknown id comes, at
//! most every [`RESCAN_INTERVAL`]; ids never found stay unnamed.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The least time between two walks of the hierarchy.
const RESCAN_INTERVAL: Duration = Duration::from_secs(10);
/// Directories walked at most in one scan (a bound on a huge hierarchy).
const MAX_DIRS: usize = 100_000;

pub struct CgroupPaths {
    /// Where cgroup v2 is mounted, if it is.
    root: Option<PathBuf>,
    paths: HashMap<u64, String>,
    last_scan: Option<Instant>,
}

impl CgroupPaths {
    pub fn new() -> CgroupPaths {
        CgroupPaths {
            root: std::fs::read_to_string("/proc/self/mountinfo")
                .ok()
                .and_then(|m| cgroup2_mount(&m)),
            paths: HashMap::new(),
            last_scan: None,
        }
    }

    /// The path of cgroup `id` below the v2 root (`/system.slice/x.service`;
    /// `/` for the root), if it can be found.
    pub fn path(&mut self, id: u64) -> Option<String> {
        if id == 0 {
            return None;
        }
        if let Some(p) = self.paths.get(&id) {
            return Some(p.clone());
        }
        let root = self.root.clone()?;
        if self
            .last_scan
            .is_some_and(|t| t.elapsed() < RESCAN_INTERVAL)
        {
            return None;
        }
        self.last_scan = Some(Instant::now());
        self.paths.clear();
        scan(&root, &root, &mut self.paths, &mut 0);
        self.paths.get(&id).cloned()
    }
}

/// The mount point of the cgroup2 file system in `/proc/self/mountinfo`.
pub fn cgroup2_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fstype = after.split_whitespace().next()?;
        let mount = before.split_whitespace().nth(4)?;
        (fstype == "cgroup2").then(|| PathBuf::from(mount))
    })
}

fn scan(root: &Path, dir: &Path, out: &mut HashMap<u64, String>, seen: &mut usize) {
    *seen += 1;
    if *seen > MAX_DIRS {
        return;
    }
    if let Ok(meta) = std::fs::metadata(dir) {
        let relative = dir.strip_prefix(root).unwrap_or(Path::new(""));
        out.insert(meta.ino(), format!("/{}", relative.display()));
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            scan(root, &entry.path(), out, seen);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroup2_mount_is_found_in_mountinfo() {
        let info = "35 24 0:30 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro\n\
                    36 35 0:31 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw\n";
        assert_eq!(
            cgroup2_mount(info),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        assert_eq!(cgroup2_mount("1 2 0:3 / /proc rw - proc proc rw\n"), None);
    }

    #[test]
    fn this_process_cgroup_has_a_path() {
        let mut paths = CgroupPaths::new();
        let Some(root) = paths.root.clone() else {
            return;
        };
        let ino = std::fs::metadata(&root).unwrap().ino();
        assert_eq!(paths.path(ino).as_deref(), Some("/"));
        assert_eq!(paths.path(0), None);
    }
}
