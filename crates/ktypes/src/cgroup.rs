//! Cgroups as the compiler sees them: where each hierarchy is mounted (from
//! the text of `/proc/self/mountinfo`), and which cgroup v2 directory a
//! `--cgroup PATH` names, with its id (asked of the kernel through
//! [`KernelInfo::cgroup_id`]).
//!
//! A cgroup's id is what `bpf_get_current_cgroup_id()` gives for a task in
//! it: the kernfs id of its directory in the v2 hierarchy (its inode number
//! on 64-bit kernels). Only v2 ids mean anything to BPF; a machine may also
//! mount v1 hierarchies (systemd's "hybrid" layout puts v2 at
//! `/sys/fs/cgroup/unified`), which `cgroup_path()` also searches, as
//! bpftrace does.

use crate::{KernelInfo, KernelInfoError};

/// One mounted cgroup hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupMount {
    /// Where it is mounted (`/sys/fs/cgroup/unified`).
    pub mount_point: String,
    /// The cgroup v2 (unified) hierarchy, rather than a v1 controller's.
    pub v2: bool,
    /// Its name as bpftrace shows it in `cgroup_path()`: `unified` for v2,
    /// the mount point's last component for v1 (`memory`, `cpu,cpuacct`).
    pub name: String,
}

/// Every cgroup hierarchy mounted, in the order of `/proc/self/mountinfo`
/// (`text`). Lines that are not cgroup mounts, or not well formed, are skipped.
pub fn parse_mountinfo_cgroups(text: &str) -> Vec<CgroupMount> {
    let mut out = Vec::new();
    for line in text.lines() {
        // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
        let Some((before, after)) = line.split_once(" - ") else {
            continue;
        };
        let Some(mount_point) = before.split(' ').nth(4) else {
            continue;
        };
        let v2 = match after.split(' ').next() {
            Some("cgroup2") => true,
            Some("cgroup") => false,
            _ => continue,
        };
        let mount_point = unescape_mount_path(mount_point);
        let name = if v2 {
            "unified".to_string()
        } else {
            mount_point
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string()
        };
        out.push(CgroupMount {
            mount_point,
            v2,
            name,
        });
    }
    out
}

/// mountinfo writes space, tab, newline and backslash in paths as octal escapes.
fn unescape_mount_path(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') as u32 * 64
                + (bytes[i + 2] - b'0') as u32 * 8
                + (bytes[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup v2 hierarchy's mount, if one is mounted.
pub fn cgroup2_mount(mounts: &[CgroupMount]) -> Option<&CgroupMount> {
    mounts.iter().find(|m| m.v2)
}

/// A cgroup v2 directory a filter names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupTarget {
    /// The directory, absolute (`/sys/fs/cgroup/unified/system.slice`).
    pub dir: String,
    /// Its path below the v2 mount, as `/proc/PID/cgroup` shows it (`/system.slice`).
    pub path: String,
    /// Its id (what `cgroup` gives for a task in it).
    pub id: u64,
}

/// The cgroup v2 directory `path` names: an absolute directory under the v2
/// mount, or a path relative to it (`/system.slice` as `/proc/PID/cgroup`
/// shows it, or `system.slice`). The error is one sentence.
pub fn resolve_cgroup(kernel: &dyn KernelInfo, path: &str) -> Result<CgroupTarget, String> {
    let mountinfo = kernel
        .read_file("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo to find cgroup v2: {e}"))?;
    let mounts = parse_mountinfo_cgroups(&String::from_utf8_lossy(&mountinfo));
    let Some(v2) = cgroup2_mount(&mounts) else {
        return Err(
            "cgroup v2 is not mounted (no cgroup2 line in /proc/self/mountinfo); cgroup filters need it: mount -t cgroup2 none /sys/fs/cgroup/unified"
                .into(),
        );
    };
    let root = v2.mount_point.trim_end_matches('/');
    let below = |base: &str| -> Option<String> {
        let base = base.trim_end_matches('/');
        if path == base {
            Some(String::new())
        } else {
            path.strip_prefix(base)
                .and_then(|rest| rest.strip_prefix('/'))
                .map(str::to_string)
        }
    };
    let relative = match below(root) {
        Some(rel) => rel,
        None => {
            if let Some(v1) = mounts
                .iter()
                .filter(|m| !m.v2)
                .find(|m| below(&m.mount_point).is_some())
            {
                return Err(format!(
                    "{path} is in the cgroup v1 hierarchy mounted at {}, whose ids BPF does not see: name a directory of the cgroup v2 hierarchy at {}",
                    v1.mount_point, v2.mount_point
                ));
            }
            path.trim_start_matches('/').to_string()
        }
    };
    let parts: Vec<&str> = relative
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        return Err(format!(
            "{path}: name the cgroup without `..` (a directory under {})",
            v2.mount_point
        ));
    }
    let rel = parts.join("/");
    let dir = if rel.is_empty() {
        root.to_string()
    } else {
        format!("{root}/{rel}")
    };
    let id = kernel.cgroup_id(&dir).map_err(|e| match e {
        KernelInfoError::NotFound(_) => format!(
            "no cgroup {path}: {dir} does not exist (cgroup v2 is mounted at {})",
            v2.mount_point
        ),
        other => format!("cgroup {path}: {other}"),
    })?;
    Ok(CgroupTarget {
        dir,
        path: format!("/{rel}"),
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FixtureKernel;

    const HYBRID: &str = "\
22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:5 - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn hierarchies_from_mountinfo() {
        let m = parse_mountinfo_cgroups(HYBRID);
        let names: Vec<(&str, bool)> = m.iter().map(|m| (m.name.as_str(), m.v2)).collect();
        assert_eq!(
            names,
            [("cpu,cpuacct", false), ("memory", false), ("unified", true)]
        );
        assert_eq!(
            cgroup2_mount(&m).unwrap().mount_point,
            "/sys/fs/cgroup/unified"
        );
        let escaped = "50 1 0:40 / /mnt/my\\040cg rw - cgroup2 none rw\n";
        assert_eq!(
            parse_mountinfo_cgroups(escaped)[0].mount_point,
            "/mnt/my cg"
        );
        assert!(parse_mountinfo_cgroups("garbage\n\n- -\n").is_empty());
    }

    fn kernel(mountinfo: &str) -> FixtureKernel {
        FixtureKernel::new()
            .with_file("/proc/self/mountinfo", mountinfo.as_bytes().to_vec())
            .with_cgroup("/sys/fs/cgroup/unified", 1)
            .with_cgroup("/sys/fs/cgroup/unified/system.slice", 42)
            .with_cgroup("/sys/fs/cgroup/unified/system.slice/cron.service", 77)
    }

    #[test]
    fn a_path_is_absolute_or_relative_to_the_v2_mount() {
        let k = kernel(HYBRID);
        for path in [
            "/sys/fs/cgroup/unified/system.slice/cron.service",
            "/system.slice/cron.service",
            "system.slice/cron.service/",
            "system.slice//./cron.service",
        ] {
            let t = resolve_cgroup(&k, path).unwrap();
            assert_eq!(t.id, 77, "{path}");
            assert_eq!(t.dir, "/sys/fs/cgroup/unified/system.slice/cron.service");
            assert_eq!(t.path, "/system.slice/cron.service");
        }
        let root = resolve_cgroup(&k, "/sys/fs/cgroup/unified").unwrap();
        assert_eq!((root.id, root.path.as_str()), (1, "/"));
        assert_eq!(resolve_cgroup(&k, "/").unwrap().id, 1);
    }

    #[test]
    fn errors_say_what_to_name() {
        let k = kernel(HYBRID);
        let e = resolve_cgroup(&k, "/sys/fs/cgroup/memory/foo").unwrap_err();
        assert!(
            e.contains("cgroup v1 hierarchy mounted at /sys/fs/cgroup/memory"),
            "{e}"
        );
        let e = resolve_cgroup(&k, "nope.slice").unwrap_err();
        assert!(
            e.contains("no cgroup nope.slice: /sys/fs/cgroup/unified/nope.slice does not exist"),
            "{e}"
        );
        let e = resolve_cgroup(&k, "system.slice/../x").unwrap_err();
        assert!(e.contains("without `..`"), "{e}");
        let v1_only: String = HYBRID
            .lines()
            .filter(|l| !l.contains("cgroup2"))
            .collect::<Vec<_>>()
            .join("\n");
        let e = resolve_cgroup(&kernel(&v1_only), "x").unwrap_err();
        assert!(e.contains("cgroup v2 is not mounted"), "{e}");
    }
}
