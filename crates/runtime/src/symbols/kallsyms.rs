//! `/proc/kallsyms` as a sorted table, searched by address.

use super::ResolvedSymbol;

/// The kernel's symbols, sorted by address (names in one buffer), with the
/// module each belongs to (`[ext4]`; none for the kernel image).
#[derive(Debug, Default)]
pub struct Kallsyms {
    /// `(address, start of the name in names, length, module index + 1 or 0)`.
    entries: Vec<(u64, u32, u32, u32)>,
    names: String,
    modules: Vec<String>,
}

impl Kallsyms {
    /// Reads `/proc/kallsyms`; an empty table if it cannot be read (every
    /// address then prints in hex, as bpftrace does without symbols).
    pub fn load() -> Kallsyms {
        std::fs::read_to_string("/proc/kallsyms")
            .map(|text| Kallsyms::parse(&text))
            .unwrap_or_default()
    }

    /// Parses kallsyms text (`address type name [module]` per line). Skips
    /// `__pfx_` padding symbols and hidden (zero) addresses; of several
    /// symbols at one address the first listed wins.
    pub fn parse(text: &str) -> Kallsyms {
        let mut table = Kallsyms::default();
        for line in text.lines() {
            let mut parts = line.split_ascii_whitespace();
            let (Some(addr), Some(_kind), Some(name)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            if addr == 0 || name.starts_with("__pfx_") {
                continue;
            }
            let module = match parts.next() {
                Some(m) if m.starts_with('[') => {
                    if table.modules.last().map(String::as_str) != Some(m) {
                        table.modules.push(m.to_string());
                    }
                    table.modules.len() as u32
                }
                _ => 0,
            };
            let start = table.names.len() as u32;
            table.names.push_str(name);
            table.entries.push((addr, start, name.len() as u32, module));
        }
        // Stable: equal addresses keep file order.
        table.entries.sort_by_key(|e| e.0);
        table.entries.dedup_by_key(|e| e.0);
        table
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The symbol at or below `addr`.
    pub fn lookup(&self, addr: u64) -> Option<ResolvedSymbol> {
        let index = self
            .entries
            .partition_point(|e| e.0 <= addr)
            .checked_sub(1)?;
        let (start, name_at, len, module) = self.entries[index];
        Some(ResolvedSymbol {
            name: self.names[name_at as usize..(name_at + len) as usize].to_string(),
            offset: addr - start,
            module: module
                .checked_sub(1)
                .and_then(|m| self.modules.get(m as usize))
                .cloned(),
        })
    }

    /// A stack frame: the first (`first`) is the exact instruction pointer,
    /// the others return addresses, looked up at `addr - 1`.
    pub fn lookup_frame(&self, addr: u64, first: bool) -> Option<ResolvedSymbol> {
        let probe = if first { addr } else { addr.saturating_sub(1) };
        let mut sym = self.lookup(probe)?;
        sym.offset = addr - (probe - sym.offset);
        Some(sym)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "\
ffffffff82265870 t __pfx___schedule
ffffffff822658a0 t __schedule
ffffffff82266800 T schedule
ffffffff82266800 T schedule_alias
ffffffff82266900 T __pfx_io_schedule
ffffffff82266910 T io_schedule
0000000000000000 A fixed_percpu_data
ffffffffc0a00000 t ext4_foo\t[ext4]
garbage line
";

    #[test]
    fn parses_and_skips_padding_and_hidden() {
        let k = Kallsyms::parse(FIXTURE);
        assert_eq!(k.len(), 4);
        assert_eq!(k.lookup(0xffffffff82265ec8).unwrap().name, "__schedule");
        assert_eq!(k.lookup(0xffffffff82265ec8).unwrap().offset, 1576);
        // The __pfx_ padding before io_schedule belongs to the previous symbol.
        assert_eq!(k.lookup(0xffffffff82266905).unwrap().name, "schedule");
        let module = k.lookup(0xffffffffc0a00010).unwrap();
        assert_eq!(module.name, "ext4_foo");
        assert_eq!(module.module.as_deref(), Some("[ext4]"));
        assert_eq!(k.lookup(0xffffffff82265ec8).unwrap().module, None);
        assert_eq!(k.lookup(0x1000), None);
    }

    #[test]
    fn first_listed_wins_at_one_address() {
        let k = Kallsyms::parse(FIXTURE);
        assert_eq!(k.lookup(0xffffffff82266823).unwrap().name, "schedule");
    }

    #[test]
    fn return_addresses_are_looked_up_one_byte_back() {
        let k = Kallsyms::parse(FIXTURE);
        // A call that is the last instruction of schedule returns to io_schedule+0.
        let ret = 0xffffffff82266910;
        let exact = k.lookup_frame(ret, true).unwrap();
        assert_eq!((exact.name.as_str(), exact.offset), ("io_schedule", 0));
        let frame = k.lookup_frame(ret, false).unwrap();
        assert_eq!((frame.name.as_str(), frame.offset), ("schedule", 0x110));
        assert_eq!(k.lookup_frame(0, false), None);
    }

    #[test]
    fn empty_text_gives_an_empty_table() {
        let k = Kallsyms::parse("");
        assert!(k.is_empty());
        assert_eq!(k.lookup(u64::MAX), None);
    }
}
