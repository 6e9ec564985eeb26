//! The kernel functions a kprobe can name, from tracefs
//! `available_filter_functions` (exact: what ftrace can patch) or, when that
//! is unreadable, the text symbols of `/proc/kallsyms`; and the address of
//! any kernel symbol (`kaddr()`).

/// A traceable kernel function.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KernelFunction {
    pub name: String,
    /// The module it lives in (`None` for vmlinux).
    pub module: Option<String>,
}

impl KernelFunction {
    /// `module:name` for module functions, `name` otherwise.
    pub fn qualified(&self) -> String {
        match &self.module {
            Some(m) => format!("{m}:{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// Parses `available_filter_functions`: `name` or `name [module]` per line.
pub fn parse_filter_functions(text: &str) -> Vec<KernelFunction> {
    sorted_unique(
        text.lines()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                let name = words.next()?;
                Some(function(name, words))
            })
            .collect(),
    )
}

/// Parses `/proc/kallsyms` (`address type name [module]`), keeping text
/// symbols (`t`, `T`) and dropping the `__pfx_` padding symbols and
/// compiler-made local copies that kprobes cannot name alone (`foo.cold`).
pub fn parse_kallsyms_functions(text: &str) -> Vec<KernelFunction> {
    sorted_unique(
        text.lines()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                let _addr = words.next()?;
                let kind = words.next()?;
                let name = words.next()?;
                if !matches!(kind, "t" | "T")
                    || name.starts_with("__pfx_")
                    || name.contains(".cold")
                {
                    return None;
                }
                Some(function(name, words))
            })
            .collect(),
    )
}

/// Where a kernel symbol is, from `/proc/kallsyms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelSymbol {
    /// Its address (the first symbol of that name, vmlinux before modules).
    At(u64),
    /// Listed, but with address 0: kallsyms hides addresses from readers
    /// without CAP_SYSLOG (`kernel.kptr_restrict`).
    Hidden,
    /// Not listed (data symbols appear only with `CONFIG_KALLSYMS_ALL`).
    Absent,
}

/// The address of the symbol `name` in a `/proc/kallsyms` text.
pub fn kallsyms_address(text: &str, name: &str) -> KernelSymbol {
    if name.is_empty() {
        return KernelSymbol::Absent;
    }
    // Found by searching for the name (a few milliseconds over the 5 MB a
    // kernel lists), then checked to be a line's whole third word.
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices(name) {
        let end = at + name.len();
        let ends_word = end == bytes.len() || matches!(bytes[end], b'\n' | b'\t' | b' ');
        if at == 0 || bytes[at - 1] != b' ' || !ends_word {
            continue;
        }
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let mut words = text[start..end].split_whitespace();
        let (Some(addr), Some(_kind), Some(sym), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            continue;
        };
        if sym == name {
            return match u64::from_str_radix(addr, 16) {
                Ok(0) | Err(_) => KernelSymbol::Hidden,
                Ok(a) => KernelSymbol::At(a),
            };
        }
    }
    KernelSymbol::Absent
}

/// `name`, and its module from the `[module]` word that may follow it.
fn function<'a>(name: &str, mut rest: impl Iterator<Item = &'a str>) -> KernelFunction {
    KernelFunction {
        name: name.to_string(),
        module: rest
            .next()
            .and_then(|m| m.strip_prefix('[')?.strip_suffix(']'))
            .map(String::from),
    }
}

fn sorted_unique(mut v: Vec<KernelFunction>) -> Vec<KernelFunction> {
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_functions_with_modules() {
        let f = parse_filter_functions("vfs_read\nvfs_write\next4_file_open [ext4]\n\n");
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].qualified(), "ext4:ext4_file_open");
        assert_eq!(f[0].module.as_deref(), Some("ext4"));
        assert_eq!(f[1].qualified(), "vfs_read");
    }

    #[test]
    fn kallsyms_addresses() {
        let text = "ffffffff81000010 t calc_avenrun\n\
                    ffffffff81000020 t avenrun_x\n\
                    ffffffff81000030 D jiffies\n\
                    ffffffff82001000 d avenrun\n\
                    ffffffffc0000000 d avenrun\t[mod]\n\
                    ffffffffc0000100 t only_in_mod\t[mod]";
        assert_eq!(
            kallsyms_address(text, "avenrun"),
            KernelSymbol::At(0xffffffff82001000)
        );
        assert_eq!(kallsyms_address(text, "nope"), KernelSymbol::Absent);
        assert_eq!(kallsyms_address(text, "avenrun_"), KernelSymbol::Absent);
        assert_eq!(kallsyms_address(text, "D"), KernelSymbol::Absent);
        assert_eq!(
            kallsyms_address(text, "only_in_mod"),
            KernelSymbol::At(0xffffffffc0000100)
        );
        assert_eq!(
            kallsyms_address("0000000000000000 D jiffies\n", "jiffies"),
            KernelSymbol::Hidden
        );
    }

    #[test]
    fn kallsyms_text_symbols_only() {
        let text = "ffffffff81000000 T _stext\n\
                    ffffffff81000010 t __pfx_vfs_read\n\
                    ffffffff81000020 T vfs_read\n\
                    ffffffff81000030 D jiffies\n\
                    ffffffff81000040 t helper.cold\n\
                    ffffffffc0000000 t xfs_open\t[xfs]\n\
                    0000000000000000 T vfs_read\n";
        let names: Vec<String> = parse_kallsyms_functions(text)
            .iter()
            .map(KernelFunction::qualified)
            .collect();
        assert_eq!(names, ["_stext", "vfs_read", "xfs:xfs_open"]);
    }
}
