//! `/proc/PID/maps`: the files a process has mapped, and its executable
//! mappings ([`ProcessMaps`]), which symbolizing its addresses needs (also
//! once it has exited, if they were kept).

/// Where the code of a mapping can be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backing {
    /// A file, at this path from the reader's point of view (the process's
    /// own path under the `root` given to [`ProcessMaps::parse`]).
    File(String),
    /// The kernel's vDSO (the same image in every process).
    Vdso,
    /// Anonymous memory: JIT code, named (if at all) by `/tmp/perf-PID.map`.
    Anonymous,
}

/// One executable mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    /// The file offset `start` maps.
    pub offset: u64,
    /// The path as the process sees it (for display), if any.
    pub path: Option<String>,
    pub backing: Backing,
}

impl Mapping {
    /// The file offset of `addr` (inside the mapping).
    pub fn file_offset(&self, addr: u64) -> u64 {
        addr - self.start + self.offset
    }
}

/// The executable mappings of one process, sorted by address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessMaps {
    pub mappings: Vec<Mapping>,
}

impl ProcessMaps {
    /// Parses `/proc/PID/maps` text. `root` is prefixed to file paths (the
    /// process's `/proc/PID/root` when it is in another mount namespace, else
    /// empty); `pid` names deleted files through `/proc/PID/map_files`.
    pub fn parse(text: &str, root: &str, pid: u32) -> ProcessMaps {
        let mut mappings = Vec::new();
        for line in text.lines() {
            // start-end perms offset dev inode [path]
            let mut fields = line.splitn(6, ' ');
            let (Some(range), Some(perms), Some(offset), Some(_dev), Some(_inode)) = (
                fields.next(),
                fields.next(),
                fields.next(),
                fields.next(),
                fields.next(),
            ) else {
                continue;
            };
            if !perms.contains('x') {
                continue;
            }
            let Some((start, end)) = range.split_once('-') else {
                continue;
            };
            let (Ok(start), Ok(end), Ok(offset)) = (
                u64::from_str_radix(start, 16),
                u64::from_str_radix(end, 16),
                u64::from_str_radix(offset, 16),
            ) else {
                continue;
            };
            let path = fields.next().map(str::trim).filter(|p| !p.is_empty());
            let backing = match path {
                Some("[vdso]") => Backing::Vdso,
                Some(p) if p.starts_with('/') => match p.strip_suffix(" (deleted)") {
                    // Readable (while the process lives) through its map_files link.
                    Some(_) => Backing::File(format!("/proc/{pid}/map_files/{start:x}-{end:x}")),
                    None => Backing::File(format!("{root}{p}")),
                },
                Some(p) if p.starts_with('[') => continue,
                _ => Backing::Anonymous,
            };
            mappings.push(Mapping {
                start,
                end,
                offset,
                path: path.map(|p| p.trim_end_matches(" (deleted)").to_string()),
                backing,
            });
        }
        mappings.sort_by_key(|m| m.start);
        ProcessMaps { mappings }
    }

    /// The mapping holding `addr`.
    pub fn find(&self, addr: u64) -> Option<&Mapping> {
        let i = self
            .mappings
            .partition_point(|m| m.start <= addr)
            .checked_sub(1)?;
        let m = &self.mappings[i];
        (addr < m.end).then_some(m)
    }
}

/// Paths of the files mapped by a process, once each, in the order they first appear.
pub fn mapped_files(maps: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in maps.lines() {
        // address perms offset dev inode path
        let mut fields = line.splitn(6, ' ');
        let Some(path) = fields.nth(5) else { continue };
        let path = path.trim_start();
        if !path.starts_with('/') {
            continue;
        }
        let path = path.strip_suffix(" (deleted)").unwrap_or(path);
        if !out.iter().any(|p| p == path) {
            out.push(path.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a10000 r--p 00000000 08:01 1234 /usr/bin/spin
55d0c0a10000-55d0c0a20000 r-xp 00010000 08:01 1234 /usr/bin/spin
7f0000000000-7f0000100000 r-xp 00028000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6
7f1000000000-7f1000010000 rwxp 00000000 00:00 0 
7f2000000000-7f2000001000 r-xp 00000000 08:01 77 /tmp/jit.so (deleted)
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
7ffd00010000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
garbage
";

    #[test]
    fn executable_mappings_only() {
        let m = ProcessMaps::parse(MAPS, "", 42);
        assert_eq!(m.mappings.len(), 5);
        let spin = m.find(0x55d0c0a10123).unwrap();
        assert_eq!(spin.backing, Backing::File("/usr/bin/spin".into()));
        assert_eq!(spin.file_offset(0x55d0c0a10123), 0x10123);
        assert_eq!(m.find(0x55d0c0a00010), None, "not executable");
        let libc = m.find(0x7f00000fffff).unwrap();
        assert_eq!(libc.file_offset(0x7f00000fffff), 0x127fff);
        // The end is exclusive; the stack has no code.
        assert_eq!(m.find(0x7f0000100000), None);
        assert_eq!(m.find(0x7ffd00010010), None);
        assert_eq!(m.find(0x7f1000000010).unwrap().backing, Backing::Anonymous);
        assert_eq!(m.find(0x7ffd00000400).unwrap().backing, Backing::Vdso);
        let deleted = m.find(0x7f2000000010).unwrap();
        assert_eq!(
            deleted.backing,
            Backing::File("/proc/42/map_files/7f2000000000-7f2000001000".into())
        );
        assert_eq!(deleted.path.as_deref(), Some("/tmp/jit.so"));
        assert_eq!(m.find(0x1000), None);
        assert_eq!(m.find(u64::MAX), None);
        assert_eq!(
            ProcessMaps::parse("garbage\n\n", "", 1),
            ProcessMaps::default()
        );
    }

    #[test]
    fn other_mount_namespaces_read_through_the_process_root() {
        let m = ProcessMaps::parse(MAPS, "/proc/42/root", 42);
        assert_eq!(
            m.find(0x7f0000000010).unwrap().backing,
            Backing::File("/proc/42/root/usr/lib/x86_64-linux-gnu/libc.so.6".into())
        );
    }

    #[test]
    fn maps() {
        let text = "\
55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 123   /tmp/weft/target
7f0000000000-7f0000022000 r--p 00000000 08:01 456   /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000022000-7f0000100000 r-xp 00022000 08:01 456   /usr/lib/x86_64-linux-gnu/libc.so.6
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0     [stack]
7ffd00030000-7ffd00031000 r-xp 00000000 00:00 0
";
        assert_eq!(
            mapped_files(text),
            vec![
                "/tmp/weft/target".to_string(),
                "/usr/lib/x86_64-linux-gnu/libc.so.6".to_string()
            ]
        );
    }
}
