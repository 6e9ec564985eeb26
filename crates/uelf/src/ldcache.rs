//! `/etc/ld.so.cache` in glibc's format (`glibc-ld.so.cache1.1`): the
//! libraries the dynamic loader knows, as `(soname, path)` pairs.

const MAGIC: &[u8] = b"glibc-ld.so.cache1.1";
const HEADER: usize = 48;
const ENTRY: usize = 24;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn c_string(b: &[u8], at: usize) -> Option<&str> {
    let tail = b.get(at..)?;
    let end = tail.iter().position(|&c| c == 0)?;
    std::str::from_utf8(&tail[..end]).ok()
}

/// The `(soname, path)` entries of a cache file, in the cache's order
/// (which is the loader's preference order). Unknown formats give nothing.
pub fn parse_ld_so_cache(data: &[u8]) -> Vec<(String, String)> {
    // The new format may follow the old one (`ld.so-1.7.0`); its string
    // offsets count from its own header.
    let Some(start) = data.windows(MAGIC.len()).position(|w| w == MAGIC) else {
        return Vec::new();
    };
    let cache = &data[start..];
    let Some(count) = u32_at(cache, MAGIC.len()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for i in 0..count as usize {
        let at = HEADER + i * ENTRY;
        let (Some(key), Some(value)) = (u32_at(cache, at + 4), u32_at(cache, at + 8)) else {
            break;
        };
        if let (Some(k), Some(v)) = (
            c_string(cache, key as usize),
            c_string(cache, value as usize),
        ) {
            out.push((k.to_string(), v.to_string()));
        }
    }
    out
}
