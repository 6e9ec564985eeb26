//! Cgroup ids back to paths, for `cgroup_path()` and stream records: each
//! mounted hierarchy (from `/proc/self/mountinfo`) is walked once for the
//! ids of its directories (a cgroup's id is its directory's inode number),
//! and again when an id is missing (a cgroup made since), at most once a
//! second per hierarchy.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use ktypes::cgroup::{CgroupMount, parse_mountinfo_cgroups};

/// How often a hierarchy may be walked again for an id it lacked.
const REWALK_AFTER: Duration = Duration::from_secs(1);
/// Directories walked at most in one walk (a bound on a huge hierarchy).
const MAX_DIRS: usize = 100_000;

/// The ids of one hierarchy's cgroups.
struct Hierarchy {
    mount: CgroupMount,
    /// Id → path below the mount (`/` for its root).
    paths: HashMap<u64, String>,
    walked: Option<Instant>,
}

impl Hierarchy {
    fn walk(&mut self) {
        self.paths.clear();
        let root = Path::new(&self.mount.mount_point);
        let mut stack = vec![(root.to_path_buf(), String::new())];
        let mut walked = 0;
        while let Some((dir, rel)) = stack.pop() {
            walked += 1;
            if walked > MAX_DIRS {
                break;
            }
            if let Ok(meta) = std::fs::metadata(&dir) {
                let shown = if rel.is_empty() {
                    "/".to_string()
                } else {
                    rel.clone()
                };
                self.paths.entry(meta.ino()).or_insert(shown);
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                // Cgroups are directories; their files' inodes are not ids.
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    stack.push((entry.path(), format!("{rel}/{name}")));
                }
            }
        }
        self.walked = Some(Instant::now());
    }

    fn path(&mut self, id: u64) -> Option<String> {
        if self.walked.is_none() {
            self.walk();
        }
        if let Some(p) = self.paths.get(&id) {
            return Some(p.clone());
        }
        if self.walked.is_some_and(|t| t.elapsed() >= REWALK_AFTER) {
            self.walk();
            return self.paths.get(&id).cloned();
        }
        None
    }
}

/// Every mounted cgroup hierarchy, with the ids of its cgroups as found.
pub struct CgroupPaths {
    hierarchies: Vec<Hierarchy>,
}

impl Default for CgroupPaths {
    fn default() -> Self {
        CgroupPaths::new()
    }
}

impl CgroupPaths {
    /// The hierarchies mounted now (none when mountinfo cannot be read).
    pub fn new() -> CgroupPaths {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut mounts = parse_mountinfo_cgroups(&text);
        // bpftrace's order: cgroup v2 first, then the v1 hierarchies by name.
        mounts.sort_by(|a, b| b.v2.cmp(&a.v2).then_with(|| a.name.cmp(&b.name)));
        CgroupPaths {
            hierarchies: mounts
                .into_iter()
                .map(|mount| Hierarchy {
                    mount,
                    paths: HashMap::new(),
                    walked: None,
                })
                .collect(),
        }
    }

    /// The path of cgroup `id` in the cgroup v2 hierarchy (`/system.slice/x`;
    /// `/` for its root), if it is there (never for id 0).
    pub fn v2_path(&mut self, id: u64) -> Option<String> {
        if id == 0 {
            return None;
        }
        self.hierarchies
            .iter_mut()
            .find(|h| h.mount.v2)
            .and_then(|h| h.path(id))
    }

    /// `cgroup_path(id, filter)` as bpftrace prints it: `NAME:PATH` for each
    /// hierarchy whose name (`unified` for v2) matches the wildcard `filter`
    /// and that has a cgroup of this id, joined by commas (empty when none has).
    pub fn bpftrace_paths(&mut self, id: u64, filter: &str) -> String {
        let mut out = Vec::new();
        for h in &mut self.hierarchies {
            if !wildcard_match(filter, &h.mount.name) {
                continue;
            }
            if let Some(path) = h.path(id) {
                out.push(format!("{}:{path}", h.mount.name));
            }
        }
        out.join(",")
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*", "memory"));
        assert!(wildcard_match("unified", "unified"));
        assert!(!wildcard_match("unified", "memory"));
        assert!(wildcard_match("cpu*", "cpu,cpuacct"));
        assert!(wildcard_match("*acct", "cpu,cpuacct"));
        assert!(wildcard_match("c*u*t", "cpu,cpuacct"));
        assert!(!wildcard_match("c*x*t", "cpu,cpuacct"));
        assert!(!wildcard_match("ab*ba", "aba"));
    }

    #[test]
    fn walks_a_directory_tree_by_inode() {
        let dir = std::env::temp_dir().join(format!("weft-cgpaths-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        std::fs::write(dir.join("a/file"), b"x").unwrap();
        let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
        let mut h = Hierarchy {
            mount: CgroupMount {
                mount_point: dir.display().to_string(),
                v2: true,
                name: "unified".into(),
            },
            paths: HashMap::new(),
            walked: None,
        };
        assert_eq!(h.path(ino(&dir)).as_deref(), Some("/"));
        assert_eq!(h.path(ino(&dir.join("a/b"))).as_deref(), Some("/a/b"));
        // Files are not cgroups.
        assert_eq!(h.path(ino(&dir.join("a/file"))), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
