//! The machine a probe runs on: where `struct pt_regs` keeps each register.
//!
//! uprobe, uretprobe and usdt programs (and kprobes, later) receive a
//! pointer to the interrupted task's `struct pt_regs`; every read of an
//! argument, a return value or a USDT operand goes through this one table.
//! Only x86_64 is described today.

/// A register as a USDT operand names it: where its 64-bit slot sits in
/// `struct pt_regs`, and which bits of the slot the name covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Register {
    /// Byte offset of the register's 64-bit slot in `struct pt_regs`.
    pub offset: u32,
    /// Bytes the name covers (8 for `%rax`, 4 for `%eax`, 2 for `%ax`, 1 for `%al`/`%ah`).
    pub size: u8,
    /// Right shift of the named bits within the slot (8 for `%ah`, else 0).
    pub shift: u8,
}

/// Size of x86_64 `struct pt_regs`.
pub const PT_REGS_SIZE: u32 = 168;

/// Offsets of the integer argument registers (`rdi, rsi, rdx, rcx, r8, r9`)
/// in the System V calling convention: `arg0`..`arg5`.
pub const ARG_OFFSETS: [u32; 6] = [112, 104, 96, 88, 72, 64];

/// Offset of `rax`, which holds a function's return value (`retval`).
pub const RETVAL_OFFSET: u32 = 80;
/// Offset of `rsp`: arguments beyond the sixth live on the stack above it.
pub const SP_OFFSET: u32 = 152;
/// Offset of `rip`.
pub const IP_OFFSET: u32 = 128;

/// `struct pt_regs` in order, by the names bpftrace's `reg()` takes.
const REG_NAMES: [&str; 21] = [
    "r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx", "si", "di",
    "orig_ax", "ip", "cs", "flags", "sp", "ss",
];

/// The offset in `struct pt_regs` of the register `reg("NAME")` reads;
/// `pc` is `ip`, as bpftrace names it on every architecture.
pub fn reg_offset(name: &str) -> Option<u32> {
    if name == "pc" {
        return Some(IP_OFFSET);
    }
    REG_NAMES
        .iter()
        .position(|n| *n == name)
        .map(|i| 8 * i as u32)
}

/// Every name `reg()` takes, for suggestions.
pub fn reg_names() -> &'static [&'static str] {
    &REG_NAMES
}

/// 64-bit slots of `struct pt_regs`, by the register's 64-bit name.
const SLOTS: &[(&str, u32)] = &[
    ("r15", 0),
    ("r14", 8),
    ("r13", 16),
    ("r12", 24),
    ("rbp", 32),
    ("rbx", 40),
    ("r11", 48),
    ("r10", 56),
    ("r9", 64),
    ("r8", 72),
    ("rax", 80),
    ("rcx", 88),
    ("rdx", 96),
    ("rsi", 104),
    ("rdi", 112),
    ("rip", 128),
    ("rsp", 152),
];

/// The register a name (without `%`) denotes, in any of its widths:
/// `rax eax ax al ah`, `rsi esi si sil`, `r8 r8d r8w r8b`, `rip`, ...
pub fn register(name: &str) -> Option<Register> {
    let slot = |full: &str| SLOTS.iter().find(|(n, _)| *n == full).map(|(_, o)| *o);
    let reg = |full: &str, size: u8, shift: u8| {
        slot(full).map(|offset| Register {
            offset,
            size,
            shift,
        })
    };
    // r8..r15 with their d/w/b forms.
    if let Some(rest) = name.strip_prefix('r') {
        let digits = rest.trim_end_matches(['d', 'w', 'b']);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            let full = format!("r{digits}");
            let size = match &rest[digits.len()..] {
                "" => 8,
                "d" => 4,
                "w" => 2,
                "b" => 1,
                _ => return None,
            };
            return reg(&full, size, 0);
        }
    }
    // The legacy registers: a, b, c, d have high-byte forms; si, di, bp, sp, ip do not.
    for base in ["a", "b", "c", "d"] {
        let full = format!("r{base}x");
        match name {
            n if n == full => return reg(&full, 8, 0),
            n if n == format!("e{base}x") => return reg(&full, 4, 0),
            n if n == format!("{base}x") => return reg(&full, 2, 0),
            n if n == format!("{base}l") => return reg(&full, 1, 0),
            n if n == format!("{base}h") => return reg(&full, 1, 8),
            _ => {}
        }
    }
    for base in ["si", "di", "bp", "sp", "ip"] {
        let full = format!("r{base}");
        match name {
            n if n == full => return reg(&full, 8, 0),
            n if n == format!("e{base}") => return reg(&full, 4, 0),
            n if n == base => return reg(&full, 2, 0),
            n if n == format!("{base}l") && base != "ip" => return reg(&full, 1, 0),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers() {
        assert_eq!(
            register("rdi"),
            Some(Register {
                offset: 112,
                size: 8,
                shift: 0
            })
        );
        assert_eq!(register("eax").map(|r| (r.offset, r.size)), Some((80, 4)));
        assert_eq!(register("ah").map(|r| (r.offset, r.shift)), Some((80, 8)));
        assert_eq!(register("r9d").map(|r| (r.offset, r.size)), Some((64, 4)));
        assert_eq!(register("r15b").map(|r| (r.offset, r.size)), Some((0, 1)));
        assert_eq!(register("sil").map(|r| (r.offset, r.size)), Some((104, 1)));
        assert_eq!(register("rsp").map(|r| r.offset), Some(SP_OFFSET));
        assert_eq!(register("rip").map(|r| r.offset), Some(IP_OFFSET));
        assert_eq!(register("r16"), None);
        assert_eq!(register("r8x"), None);
        assert_eq!(register("xmm0"), None);
        assert_eq!(register(""), None);
        for (i, n) in ["rdi", "rsi", "rdx", "rcx", "r8", "r9"].iter().enumerate() {
            assert_eq!(register(n).map(|r| r.offset), Some(ARG_OFFSETS[i]));
        }
    }

    /// `reg("pc")` is the instruction pointer, as in bpftrace.
    #[test]
    fn pc_is_ip() {
        assert_eq!(reg_offset("pc"), Some(IP_OFFSET));
        assert_eq!(reg_offset("ip"), Some(IP_OFFSET));
        assert_eq!(reg_offset("rip"), None);
    }
}
