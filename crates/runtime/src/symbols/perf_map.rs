//! `/tmp/perf-PID.map`: the symbols a JIT runtime (node `--perf-basic-prof`,
//! the JVM with perf-map-agent, LuaJIT, ...) writes for code it generated
//! in anonymous memory, one `START SIZE name` line each (hexadecimal). The
//! file outlives the process, so its frames resolve after it exits.

/// A parsed perf map, sorted by address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfMap {
    /// `(start, size, name)`.
    entries: Vec<(u64, u64, String)>,
}

impl PerfMap {
    /// Parses the map's text; bad lines are skipped. Of overlapping entries
    /// (re-compiled code) the one written last wins, as perf does.
    pub fn parse(text: &str) -> PerfMap {
        let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
        let mut entries: Vec<(u64, u64, String, usize)> = text
            .lines()
            .enumerate()
            .filter_map(|(line_no, line)| {
                let mut parts = line.splitn(3, ' ');
                let start = hex(parts.next()?)?;
                let size = hex(parts.next()?)?;
                let name = parts.next()?.trim();
                (size > 0 && !name.is_empty()).then(|| (start, size, name.to_string(), line_no))
            })
            .collect();
        // By start, the latest line last among equal starts.
        entries.sort_by_key(|e| (e.0, e.3));
        entries.reverse();
        entries.dedup_by_key(|e| e.0);
        entries.reverse();
        PerfMap {
            entries: entries
                .into_iter()
                .map(|(s, n, name, _)| (s, n, name))
                .collect(),
        }
    }

    /// Reads `/tmp/perf-PID.map`; `None` if there is none.
    pub fn read(pid: u32) -> Option<PerfMap> {
        std::fs::read_to_string(Self::path(pid))
            .ok()
            .map(|t| PerfMap::parse(&t))
    }

    pub fn path(pid: u32) -> String {
        format!("/tmp/perf-{pid}.map")
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The symbol holding `addr` and the offset into it.
    pub fn lookup(&self, addr: u64) -> Option<(&str, u64)> {
        let i = self
            .entries
            .partition_point(|e| e.0 <= addr)
            .checked_sub(1)?;
        let (start, size, name) = &self.entries[i];
        (addr - start < *size).then(|| (name.as_str(), addr - start))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_inside_entries_only() {
        let m = PerfMap::parse(
            "3ef414c0 398 LazyCompile:~main /app/index.js:1\n\
             0x3ef41900 40 Builtin:ArgumentsAdaptorTrampoline\n\
             bad line\n\
             3ef42000 0 empty\n",
        );
        assert_eq!(m.len(), 2);
        assert_eq!(
            m.lookup(0x3ef414c8),
            Some(("LazyCompile:~main /app/index.js:1", 8))
        );
        assert_eq!(
            m.lookup(0x3ef41900),
            Some(("Builtin:ArgumentsAdaptorTrampoline", 0))
        );
        assert_eq!(m.lookup(0x3ef41940), None);
        assert_eq!(m.lookup(0x10), None);
    }

    #[test]
    fn the_last_entry_at_an_address_wins() {
        let m = PerfMap::parse("1000 10 old\n1000 20 new\n");
        assert_eq!(m.lookup(0x1015), Some(("new", 0x15)));
    }
}
