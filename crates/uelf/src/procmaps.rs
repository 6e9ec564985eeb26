//! `/proc/PID/maps`: the files a process has mapped.

/// Where an address of a process lies: the file mapped there and the
/// offset in that file (what symbolizing from the file needs once the
/// process is gone). `None` for memory that no file backs (heap, stack,
/// the vDSO, JIT code) or an address outside every mapping.
pub fn file_offset(maps: &str, addr: u64) -> Option<(String, u64)> {
    for line in maps.lines() {
        // address perms offset dev inode path
        let mut fields = line.splitn(6, ' ');
        let (Some(range), Some(_perms), Some(offset)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
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
        if !(start..end).contains(&addr) {
            continue;
        }
        let path = fields.nth(2)?.trim_start();
        let path = path.strip_suffix(" (deleted)").unwrap_or(path);
        return path
            .starts_with('/')
            .then(|| (path.to_string(), addr - start + offset));
    }
    None
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

    #[test]
    fn addresses_become_file_offsets() {
        let text = "\
55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 123   /tmp/weft/target
7f0000022000-7f0000100000 r-xp 00022000 08:01 456   /usr/lib/x86_64-linux-gnu/libc.so.6
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0     [stack]
7ffd00030000-7ffd00031000 r-xp 00000000 00:00 0
";
        let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6".to_string();
        assert_eq!(
            file_offset(text, 0x7f0000022000),
            Some((libc.clone(), 0x22000))
        );
        assert_eq!(file_offset(text, 0x7f00000fffff), Some((libc, 0xfffff)));
        assert_eq!(
            file_offset(text, 0x55d0c0a00010),
            Some(("/tmp/weft/target".to_string(), 0x10))
        );
        // The end is exclusive; the stack and anonymous memory have no file.
        assert_eq!(file_offset(text, 0x7f0000100000), None);
        assert_eq!(file_offset(text, 0x7ffd00000010), None);
        assert_eq!(file_offset(text, 0x7ffd00030010), None);
        assert_eq!(file_offset("garbage\n\n", 1), None);
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
