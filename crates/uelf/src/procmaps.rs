//! `/proc/PID/maps`: the files a process has mapped.

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
