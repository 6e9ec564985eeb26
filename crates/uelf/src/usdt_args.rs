//! USDT argument specs as `sys/sdt.h` writes them on x86_64 (GNU assembler
//! operand syntax), one per argument, separated by spaces:
//!
//! | spec | meaning |
//! |---|---|
//! | `-4@%eax` | the low 32 bits of `rax`, signed |
//! | `8@%rdx` | `rdx`, unsigned |
//! | `4@$5` | the constant 5 |
//! | `8@-8(%rbp)` | 8 bytes at `rbp - 8` |
//! | `8@16(%rax,%rbx,8)` | 8 bytes at `rax + rbx * 8 + 16` |
//!
//! The size is 1, 2, 4 or 8 bytes; a leading `-` means signed.

use abi::arch::{Register, register};

/// Where an argument's value is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgLocation {
    /// An immediate (`$5`).
    Const(i64),
    /// A register's value (`%eax`).
    Reg(Register),
    /// Memory at `base + index * scale + offset` (`-8(%rbp)`, `16(%rax,%rbx,8)`).
    Mem {
        base: Register,
        offset: i64,
        index: Option<(Register, u8)>,
    },
}

/// One argument of a USDT probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsdtArg {
    /// Bytes: 1, 2, 4 or 8.
    pub size: u8,
    pub signed: bool,
    pub location: ArgLocation,
}

/// A spec that could not be read: which argument, where in the text, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgSpecError {
    /// Index of the argument (0-based).
    pub arg: usize,
    /// Byte offset in the whole spec string where the problem starts.
    pub at: usize,
    pub message: String,
}

impl std::fmt::Display for ArgSpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "argument {}: {}", self.arg, self.message)
    }
}

impl std::error::Error for ArgSpecError {}

/// Parses a whole spec string (`-4@%eax 8@-8(%rbp)`) into its arguments.
pub fn parse_arg_specs(spec: &str) -> Result<Vec<UsdtArg>, ArgSpecError> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in spec.char_indices().chain([(spec.len(), ' ')]) {
        match (c.is_ascii_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                let index = out.len();
                out.push(
                    parse_one(&spec[s..i], s).map_err(|(at, message)| ArgSpecError {
                        arg: index,
                        at,
                        message,
                    })?,
                );
                start = None;
            }
            _ => {}
        }
    }
    Ok(out)
}

type Failure = (usize, String);

/// One `SIZE@OPERAND`; `base` is its offset in the whole spec, for errors.
fn parse_one(text: &str, base: usize) -> Result<UsdtArg, Failure> {
    let Some((size_text, operand)) = text.split_once('@') else {
        return Err((
            base,
            format!("`{text}` has no `@` between size and operand"),
        ));
    };
    let (signed, digits) = match size_text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, size_text.strip_prefix('+').unwrap_or(size_text)),
    };
    let size = match digits {
        "1" => 1,
        "2" => 2,
        "4" => 4,
        "8" => 8,
        _ => {
            return Err((
                base,
                format!("size `{size_text}` is not 1, 2, 4 or 8 (with an optional `-`)"),
            ));
        }
    };
    let op_at = base + size_text.len() + 1;
    let location = parse_operand(operand, op_at)?;
    Ok(UsdtArg {
        size,
        signed,
        location,
    })
}

fn parse_operand(op: &str, at: usize) -> Result<ArgLocation, Failure> {
    if let Some(imm) = op.strip_prefix('$') {
        return parse_int(imm)
            .map(ArgLocation::Const)
            .ok_or((at, format!("constant `{op}` is not an integer")));
    }
    if let Some(name) = op.strip_prefix('%') {
        return reg(name, at).map(ArgLocation::Reg);
    }
    let Some(open) = op.find('(') else {
        return Err((
            at,
            format!("operand `{op}` is not a register, a constant or a memory reference"),
        ));
    };
    let Some(inner) = op[open + 1..].strip_suffix(')') else {
        return Err((
            at + open,
            format!("memory operand `{op}` has no closing `)`"),
        ));
    };
    let disp = &op[..open];
    let offset = if disp.is_empty() {
        0
    } else {
        parse_int(disp).ok_or((
            at,
            format!(
                "displacement `{disp}` is not an integer (symbolic operands are not supported)"
            ),
        ))?
    };
    let inner_at = at + open + 1;
    let mut parts = inner.split(',');
    let base_text = parts.next().unwrap_or("");
    let base = match base_text.trim().strip_prefix('%') {
        Some(name) => reg(name, inner_at)?,
        None => {
            return Err((
                inner_at,
                format!("memory operand `{op}` needs a base register"),
            ));
        }
    };
    let index = match parts.next() {
        None => None,
        Some(index_text) => {
            let index_at = inner_at + base_text.len() + 1;
            let Some(name) = index_text.trim().strip_prefix('%') else {
                return Err((index_at, format!("index `{index_text}` is not a register")));
            };
            let index = reg(name, index_at)?;
            let scale = match parts.next().map(str::trim) {
                None => 1,
                Some("1") => 1,
                Some("2") => 2,
                Some("4") => 4,
                Some("8") => 8,
                Some(s) => return Err((index_at, format!("scale `{s}` is not 1, 2, 4 or 8"))),
            };
            Some((index, scale))
        }
    };
    if parts.next().is_some() {
        return Err((at, format!("memory operand `{op}` has too many parts")));
    }
    Ok(ArgLocation::Mem {
        base,
        offset,
        index,
    })
}

fn reg(name: &str, at: usize) -> Result<Register, Failure> {
    register(name).ok_or((at, format!("`%{name}` is not an x86_64 integer register")))
}

/// A decimal or `0x` hexadecimal integer with an optional sign.
fn parse_int(text: &str) -> Option<i64> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => digits.parse::<u64>().ok()?,
    };
    if neg {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        // Large unsigned immediates keep their bits.
        Some(magnitude as i64)
    }
}
