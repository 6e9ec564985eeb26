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
        std::fs::read("/proc/kallsyms")
            .map(|bytes| Kallsyms::parse_bytes(&bytes))
            .unwrap_or_default()
    }

    /// Parses kallsyms text (`address type name [module]` per line). Skips
    /// `__pfx_` padding symbols and hidden (zero) addresses; of several
    /// symbols at one address the first listed wins.
    pub fn parse(text: &str) -> Kallsyms {
        Kallsyms::parse_bytes(text.as_bytes())
    }

    /// [`Kallsyms::parse`] of the file's bytes, field by field: a profile
    /// reads some 120,000 lines of it, and this is the part weft controls.
    fn parse_bytes(text: &[u8]) -> Kallsyms {
        let mut entries = Vec::with_capacity(text.len() / 40);
        let mut names: Vec<u8> = Vec::with_capacity(text.len() / 2);
        let mut modules: Vec<String> = Vec::new();
        for line in text.split(|&b| b == b'\n') {
            let mut fields = line
                .split(|&b| b == b' ' || b == b'\t')
                .filter(|f| !f.is_empty());
            let (Some(addr), Some(_kind), Some(name)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let Some(addr) = parse_hex(addr) else {
                continue;
            };
            if addr == 0 || name.starts_with(b"__pfx_") {
                continue;
            }
            let module = match fields.next() {
                Some(m) if m.first() == Some(&b'[') => {
                    if modules.last().map(String::as_bytes) != Some(m) {
                        modules.push(String::from_utf8_lossy(m).into_owned());
                    }
                    modules.len() as u32
                }
                _ => 0,
            };
            let start = names.len() as u32;
            names.extend_from_slice(name);
            entries.push((addr, start, name.len() as u32, module));
        }
        // Stable: equal addresses keep file order (the file is nearly sorted,
        // which a merge sort takes in one pass).
        entries.sort_by_key(|e| e.0);
        entries.dedup_by_key(|e| e.0);
        let names = String::from_utf8(names)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Kallsyms {
            entries,
            names,
            modules,
        }
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

/// A hexadecimal number of at most 16 digits.
fn parse_hex(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        Some(n << 4 | u64::from(v))
    })
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
    fn hex_digits() {
        assert_eq!(parse_hex(b"ffffffff82265870"), Some(0xffffffff82265870));
        assert_eq!(parse_hex(b"0"), Some(0));
        assert_eq!(parse_hex(b""), None);
        assert_eq!(parse_hex(b"12g"), None);
        assert_eq!(parse_hex(b"11112222333344445"), None);
    }

    #[test]
    fn this_kernel_s_table_names_a_kernel_function() {
        let k = Kallsyms::load();
        if k.is_empty() {
            return; // not readable here (no root, or kptr_restrict)
        }
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap();
        let line = text
            .lines()
            .find(|l| l.ends_with(" T schedule"))
            .expect("schedule is a kernel function");
        let addr = u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap();
        if addr == 0 {
            return; // addresses hidden
        }
        assert_eq!(k.lookup(addr + 3).unwrap().name, "schedule");
    }

    #[test]
    fn empty_text_gives_an_empty_table() {
        let k = Kallsyms::parse("");
        assert!(k.is_empty());
        assert_eq!(k.lookup(u64::MAX), None);
    }
}
