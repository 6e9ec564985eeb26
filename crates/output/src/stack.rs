//! Stacks and symbols as values, and how they print, byte for byte like
//! bpftrace 0.17.
//!
//! Decoding gives a [`Stack`] only its stack id and pid; the frames come
//! from user space (the stack-trace map and the symbol tables) through a
//! [`StackResolver`], so this crate stays free of syscalls:
//! [`resolve_dump`] and [`resolve_value`] fill them in before printing.

use abi::StackMode;

use crate::value::{MapDump, MapEntryValue, Value};

/// A captured stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stack {
    /// A user stack (`ustack`) rather than a kernel one.
    pub user: bool,
    pub mode: StackMode,
    /// Frames kept at most (the stack map it lives in).
    pub limit: u32,
    /// The id from `bpf_get_stackid`; negative when no stack was captured.
    pub id: i64,
    /// The process a user stack belongs to (0 for kernel stacks).
    pub pid: u32,
    /// Innermost first; empty until resolved.
    pub frames: Vec<Frame>,
}

/// One frame: an address and what it resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub addr: u64,
    pub symbol: Option<Symbol>,
    /// In `build_id` mode: the build id of the file mapped at the address
    /// and the address's offset in that file.
    pub file: Option<FileOffset>,
}

/// Where a user address lies in the file mapped there, by build id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileOffset {
    /// The file's GNU build id, in hex.
    pub build_id: String,
    pub offset: u64,
}

/// A symbol an address falls in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// `addr - start of the symbol`.
    pub offset: u64,
    /// The file it comes from (user space), shown in `perf` mode.
    pub module: Option<String>,
}

/// `ksym(addr)` / `usym(addr)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymValue {
    pub user: bool,
    pub addr: u64,
    pub pid: u32,
    /// The symbol's name once resolved.
    pub name: Option<String>,
}

/// `cgroup_path(id[, filter])`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupPathValue {
    pub id: u64,
    /// Which hierarchies to look in: an index of `Manifest::cgroup_path_filters`.
    pub filter: u32,
    /// The paths as printed (`unified:/system.slice,memory:`) once resolved.
    pub path: Option<String>,
}

/// `username`: a user id printed as the user's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserValue {
    pub uid: u32,
    /// The name once looked up (empty for a uid no user has, as bpftrace
    /// prints it).
    pub name: Option<String>,
}

/// `strftime(fmt, ns)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimestampValue {
    /// Nanoseconds of the monotonic clock (`nsecs`).
    pub ns: u64,
    /// Its format: an index of `Manifest::time_formats`.
    pub format: u32,
    /// The wall-clock text once formatted.
    pub text: Option<String>,
}

/// Gives stacks their frames, addresses their symbols and cgroup ids their
/// paths (implemented by the cli with the runtime's stack maps, symbolizers
/// and cgroup hierarchies).
pub trait StackResolver {
    /// The frames of `stack` (its id, pid, kind and limit are set).
    fn frames(&mut self, stack: &Stack) -> Vec<Frame>;
    /// The name of the symbol holding `addr` (in process `pid` for user space).
    fn symbol(&mut self, user: bool, addr: u64, pid: u32) -> Option<String>;
    /// The paths of cgroup `id` in the hierarchies filter `filter` selects,
    /// as bpftrace prints them.
    fn cgroup_path(&mut self, _id: u64, _filter: u32) -> Option<String> {
        None
    }
    /// The wall-clock text of `strftime()`'s `ns` in format `format`.
    fn timestamp(&mut self, _ns: u64, _format: u32) -> Option<String> {
        None
    }
    /// The name of user `uid` (`""` for a uid no user has).
    fn username(&mut self, _uid: u32) -> Option<String> {
        None
    }
}

/// Resolves every stack and symbol in a value, recursively.
pub fn resolve_value(value: &mut Value, resolver: &mut dyn StackResolver) {
    match value {
        Value::Stack(stack) if stack.frames.is_empty() && stack.id >= 0 => {
            stack.frames = resolver.frames(stack);
        }
        Value::Sym(sym) if sym.name.is_none() => {
            sym.name = resolver.symbol(sym.user, sym.addr, sym.pid);
        }
        Value::CgroupPath(cg) if cg.path.is_none() => {
            cg.path = resolver.cgroup_path(cg.id, cg.filter);
        }
        Value::Timestamp(t) if t.text.is_none() => {
            t.text = resolver.timestamp(t.ns, t.format);
        }
        Value::User(u) if u.name.is_none() => {
            u.name = resolver.username(u.uid);
        }
        Value::Tuple(items) | Value::Array(items) => {
            for item in items {
                resolve_value(item, resolver);
            }
        }
        Value::Record(fields) => {
            for (_, field) in fields {
                resolve_value(field, resolver);
            }
        }
        _ => {}
    }
}

/// Resolves every stack and symbol in a map's keys and plain values.
pub fn resolve_dump(dump: &mut MapDump, resolver: &mut dyn StackResolver) {
    for entry in &mut dump.entries {
        for key in &mut entry.key {
            resolve_value(key, resolver);
        }
        if let MapEntryValue::Plain(v) = &mut entry.value {
            resolve_value(v, resolver);
        }
    }
}

/// Whether a value holds a stack or symbol that needs resolving.
pub fn needs_resolving(value: &Value) -> bool {
    match value {
        Value::Stack(_) | Value::Sym(_) => true,
        Value::CgroupPath(cg) => cg.path.is_none(),
        Value::Timestamp(t) => t.text.is_none(),
        Value::User(u) => u.name.is_none(),
        Value::Tuple(items) | Value::Array(items) => items.iter().any(needs_resolving),
        Value::Record(fields) => fields.iter().any(|(_, v)| needs_resolving(v)),
        _ => false,
    }
}

/// A stack as bpftrace prints it: empty when none was captured, else a
/// newline and one line per frame (`indent` spaces then `symbol+offset` in
/// bpftrace mode; a tab, the hex address and the symbol in perf mode).
/// Map keys and values use an indent of 4, printf's `%s` 8.
pub fn stack_text(stack: &Stack, indent: usize) -> Vec<u8> {
    if stack.id < 0 {
        return Vec::new();
    }
    let mut out = String::from("\n");
    for frame in stack.frames.iter().take_while(|f| f.addr != 0) {
        match (stack.mode, &frame.file) {
            (StackMode::Raw, _) | (StackMode::BuildId, None) => {
                out.push_str(&format!("{:x}\n", frame.addr));
                continue;
            }
            (StackMode::BuildId, Some(f)) => {
                out.push_str(&format!("{} 0x{:02x}\n", f.build_id, f.offset));
                continue;
            }
            _ => {}
        }
        let sym = match &frame.symbol {
            Some(s) => format!("{}+{}", s.name, s.offset),
            None => format!("0x{:x}", frame.addr),
        };
        match stack.mode {
            StackMode::Bpftrace => {
                out.extend(std::iter::repeat_n(' ', indent));
                out.push_str(&sym);
            }
            StackMode::Raw | StackMode::BuildId => {}
            StackMode::Perf => {
                out.push_str(&format!("\t{:x} {sym}", frame.addr));
                if stack.user {
                    let module = frame
                        .symbol
                        .as_ref()
                        .and_then(|s| s.module.as_deref())
                        .unwrap_or("[unknown]");
                    out.push_str(&format!(" ({module})"));
                }
            }
        }
        out.push('\n');
    }
    out.into_bytes()
}

/// `ksym`/`usym` text: the symbol's name, or the address as C++ streams a
/// `void *` (bpftrace's fallback): `0` for a null address, else `0x` and hex.
pub fn sym_text(sym: &SymValue) -> Vec<u8> {
    match (&sym.name, sym.addr) {
        (Some(name), _) => name.clone().into_bytes(),
        (None, 0) => b"0".to_vec(),
        (None, addr) => format!("0x{addr:x}").into_bytes(),
    }
}

/// `strftime()` text: the time formatted, or its nanoseconds when it was not.
pub fn timestamp_text(t: &TimestampValue) -> Vec<u8> {
    match &t.text {
        Some(text) => text.clone().into_bytes(),
        None => t.ns.to_string().into_bytes(),
    }
}

/// `username` text: the user's name, or the uid when it was not looked up.
pub fn user_text(u: &UserValue) -> Vec<u8> {
    match &u.name {
        Some(name) => name.clone().into_bytes(),
        None => u.uid.to_string().into_bytes(),
    }
}

/// `cgroup_path` text: its paths, or the id when they were not looked up.
pub fn cgroup_path_text(cg: &CgroupPathValue) -> Vec<u8> {
    match &cg.path {
        Some(path) => path.clone().into_bytes(),
        None => cg.id.to_string().into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(addr: u64, name: Option<(&str, u64, Option<&str>)>) -> Frame {
        Frame {
            addr,
            symbol: name.map(|(n, o, m)| Symbol {
                name: n.into(),
                offset: o,
                module: m.map(str::to_string),
            }),
            file: None,
        }
    }

    fn stack(user: bool, mode: StackMode, frames: Vec<Frame>) -> Stack {
        Stack {
            user,
            mode,
            limit: 127,
            id: 3,
            pid: 42,
            frames,
        }
    }

    #[test]
    fn bpftrace_mode_indents_symbol_plus_offset() {
        let s = stack(
            false,
            StackMode::Bpftrace,
            vec![
                frame(0xffffffff82265ec8, Some(("__schedule", 1576, None))),
                frame(0xffffffff82266833, Some(("schedule", 35, None))),
            ],
        );
        assert_eq!(
            String::from_utf8(stack_text(&s, 4)).unwrap(),
            "\n    __schedule+1576\n    schedule+35\n"
        );
        assert_eq!(
            String::from_utf8(stack_text(&s, 8)).unwrap(),
            "\n        __schedule+1576\n        schedule+35\n"
        );
    }

    #[test]
    fn perf_mode_shows_addresses_and_user_modules() {
        let k = stack(
            false,
            StackMode::Perf,
            vec![frame(0xffffffff82265ec8, Some(("__schedule", 1576, None)))],
        );
        assert_eq!(
            String::from_utf8(stack_text(&k, 4)).unwrap(),
            "\n\tffffffff82265ec8 __schedule+1576\n"
        );
        let u = stack(
            true,
            StackMode::Perf,
            vec![
                frame(
                    0x56316962716f,
                    Some(("weft_spin_leaf", 22, Some("/tmp/st/spin"))),
                ),
                frame(0x7faab9362b46, None),
            ],
        );
        assert_eq!(
            String::from_utf8(stack_text(&u, 4)).unwrap(),
            "\n\t56316962716f weft_spin_leaf+22 (/tmp/st/spin)\n\t7faab9362b46 0x7faab9362b46 ([unknown])\n"
        );
    }

    #[test]
    fn raw_mode_prints_bare_addresses() {
        let s = stack(
            true,
            StackMode::Raw,
            vec![
                frame(0x56316962716f, Some(("ignored", 1, None))),
                frame(0x7faab9362b46, None),
            ],
        );
        // No indent in any position, as bpftrace prints raw stacks.
        assert_eq!(
            String::from_utf8(stack_text(&s, 8)).unwrap(),
            "\n56316962716f\n7faab9362b46\n"
        );
    }

    #[test]
    fn build_id_mode_prints_file_build_ids_and_offsets() {
        let mut with_file = frame(0x56316962716f, None);
        with_file.file = Some(FileOffset {
            build_id: "8f3c2a".into(),
            offset: 0x116f,
        });
        let mut low = frame(0x5631696201f0, None);
        low.file = Some(FileOffset {
            build_id: "8f3c2a".into(),
            offset: 0x1,
        });
        let s = stack(
            true,
            StackMode::BuildId,
            vec![with_file, low, frame(0x7ffd12345678, None)],
        );
        // The offset has at least two hex digits; an address in no file
        // with a build id prints bare.
        assert_eq!(
            String::from_utf8(stack_text(&s, 8)).unwrap(),
            "\n8f3c2a 0x116f\n8f3c2a 0x01\n7ffd12345678\n"
        );
    }

    #[test]
    fn uncaptured_stack_is_empty_and_zero_ends_frames() {
        let mut s = stack(
            false,
            StackMode::Bpftrace,
            vec![frame(0x10, None), frame(0, None)],
        );
        assert_eq!(
            String::from_utf8(stack_text(&s, 4)).unwrap(),
            "\n    0x10\n"
        );
        s.id = -14;
        assert_eq!(stack_text(&s, 4), b"");
    }

    struct Fixed;
    impl StackResolver for Fixed {
        fn frames(&mut self, stack: &Stack) -> Vec<Frame> {
            vec![frame(stack.id as u64, Some(("f", 1, None)))]
        }
        fn symbol(&mut self, _user: bool, addr: u64, _pid: u32) -> Option<String> {
            (addr == 7).then(|| "seven".to_string())
        }
    }

    #[test]
    fn resolving_fills_tuples() {
        let mut v = Value::Tuple(vec![
            Value::Stack(Box::new(stack(false, StackMode::Bpftrace, Vec::new()))),
            Value::Sym(SymValue {
                user: false,
                addr: 7,
                pid: 0,
                name: None,
            }),
            Value::Sym(SymValue {
                user: true,
                addr: 9,
                pid: 1,
                name: None,
            }),
        ]);
        assert!(needs_resolving(&v));
        resolve_value(&mut v, &mut Fixed);
        let Value::Tuple(items) = &v else { panic!() };
        let Value::Stack(s) = &items[0] else { panic!() };
        assert_eq!(s.frames.len(), 1);
        let Value::Sym(a) = &items[1] else { panic!() };
        assert_eq!(sym_text(a), b"seven");
        let Value::Sym(b) = &items[2] else { panic!() };
        assert_eq!(sym_text(b), b"0x9");
    }

    #[test]
    fn an_unresolved_null_address_prints_as_0() {
        // As bpftrace streams `(void *)addr`: `ksym(0)` and `usym(0)` print 0.
        for user in [false, true] {
            let sym = |addr| SymValue {
                user,
                addr,
                pid: 1,
                name: None,
            };
            assert_eq!(sym_text(&sym(0)), b"0");
            assert_eq!(sym_text(&sym(0x10)), b"0x10");
        }
    }
}
