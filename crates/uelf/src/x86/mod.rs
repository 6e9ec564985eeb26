//! x86-64 instruction lengths, for placing uprobes.
//!
//! A uprobe writes a breakpoint byte at its address. Inside an instruction
//! that byte changes what the instruction does, in every process that runs
//! the file: so weft decodes a function from its start and accepts a probe
//! only where an instruction begins ([`place`]). The decoder knows lengths
//! only: legacy prefixes, REX, the one-, two- and three-byte opcode maps
//! ([`tables`]), VEX, EVEX and XOP, ModRM, SIB, displacements and
//! immediates. What it does not decode (3DNow!, APX, bytes that are not an
//! instruction in 64-bit mode) is an error, never a guess.
//!
//! It also tells whether an instruction is vector-encoded (VEX, EVEX or
//! XOP). The kernel single-steps a uprobe's instruction out of line; on
//! this project's test kernel (6.18) it accepts an EVEX instruction such as
//! glibc's `vpbroadcastb %esi,%ymm17` at the entry of `__strchr_evex` and
//! then loses its result now and then, which corrupts every process that
//! calls the function (printf, bash, cc). So weft never places a uprobe on
//! one, whatever the kernel would accept.

mod tables;
#[cfg(test)]
mod tests;

use tables::Operands;

/// The longest instruction the CPU executes.
const MAX_LEN: usize = 15;

/// How an instruction is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Legacy and REX prefixes with the one-, two- or three-byte maps.
    Legacy,
    Vex,
    Evex,
    Xop,
}

/// One decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// Its length in bytes, prefixes included.
    pub len: usize,
    pub encoding: Encoding,
}

impl Instruction {
    /// VEX, EVEX or XOP encoded (see the module documentation).
    pub fn is_vector(&self) -> bool {
        self.encoding != Encoding::Legacy
    }
}

/// Why the bytes at a place are not an instruction the decoder knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end before the instruction does.
    Truncated,
    /// Not an instruction in 64-bit mode (what objdump prints as `(bad)`).
    Invalid,
    /// A valid encoding that weft does not decode, named.
    Unsupported(&'static str),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Truncated => f.write_str("the bytes end inside an instruction"),
            DecodeError::Invalid => f.write_str("they are not an instruction in 64-bit mode"),
            DecodeError::Unsupported(what) => write!(f, "{what}, which weft does not decode"),
        }
    }
}

/// Where an offset falls among the instructions decoded from a function's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// An instruction begins there.
    Boundary,
    /// It is inside the instruction of `len` bytes that begins at `start`.
    Inside { start: u64, len: usize },
    /// The instruction at `at`, before the offset, could not be decoded.
    Undecodable { at: u64, error: DecodeError },
}

/// Where `offset` falls when `code` (a function's bytes, from its entry)
/// is decoded instruction by instruction from its start.
pub fn place(code: &[u8], offset: u64) -> Placement {
    let mut at = 0usize;
    while (at as u64) < offset {
        match decode(code.get(at..).unwrap_or_default()) {
            Err(error) => {
                return Placement::Undecodable {
                    at: at as u64,
                    error,
                };
            }
            Ok(i) if (at + i.len) as u64 > offset => {
                return Placement::Inside {
                    start: at as u64,
                    len: i.len,
                };
            }
            Ok(i) => at += i.len,
        }
    }
    Placement::Boundary
}

/// Legacy prefixes (groups 1 to 4). A REX prefix is apart: it counts only
/// right before the opcode.
fn is_legacy_prefix(b: u8) -> bool {
    matches!(
        b,
        0x66 | 0x67 | 0xf2 | 0xf3 | 0xf0 | 0x2e | 0x36 | 0x3e | 0x26 | 0x64 | 0x65
    )
}

/// The vector encoding whose escape begins `rest` (after any prefixes):
/// `c5`/`c4` VEX, `62` EVEX (64-bit mode has no LDS, LES or BOUND), and
/// `8f` XOP when its map select is 8 or more (below, `8f` is `pop r/m`,
/// whose ModRM has 0 in those bits).
fn vector_escape(rest: &[u8]) -> Option<Encoding> {
    match rest {
        [0xc4 | 0xc5, ..] => Some(Encoding::Vex),
        [0x62, ..] => Some(Encoding::Evex),
        [0x8f, next, ..] if next & 0x1f >= 8 => Some(Encoding::Xop),
        _ => None,
    }
}

/// Whether the instruction that `code` begins with is VEX, EVEX or XOP
/// encoded, in 64-bit mode, from its escape byte alone: true even when the
/// rest cannot be decoded. Too few bytes to tell count as not vector-encoded.
pub fn is_vector_instruction(code: &[u8]) -> bool {
    let prefixes = code.iter().take_while(|b| is_legacy_prefix(**b)).count();
    vector_escape(&code[prefixes..]).is_some()
}

/// What the prefixes before the opcode say about its operands' sizes.
#[derive(Default)]
struct Prefixes {
    /// `66`: 16-bit operands (and a mandatory prefix of SSE instructions).
    operand_size: bool,
    /// `67`: 32-bit addresses (the ModRM forms are the same in 64-bit mode).
    address_size: bool,
    /// The last of `f2`/`f3`.
    rep: Option<u8>,
    lock: bool,
    /// A REX prefix right before the opcode.
    rex: Option<u8>,
}

impl Prefixes {
    fn rex_w(&self) -> bool {
        self.rex.is_some_and(|r| r & 0x08 != 0)
    }

    /// The size of a `z` immediate: 16 bits with `66` (unless REX.W), else 32.
    fn imm_z(&self) -> usize {
        if self.operand_size && !self.rex_w() {
            2
        } else {
            4
        }
    }
}

fn byte(code: &[u8], at: usize) -> Result<u8, DecodeError> {
    code.get(at).copied().ok_or(DecodeError::Truncated)
}

/// Decodes the instruction that `code` begins with, in 64-bit mode.
pub fn decode(code: &[u8]) -> Result<Instruction, DecodeError> {
    let mut p = Prefixes::default();
    let mut at = 0;
    loop {
        if at >= MAX_LEN {
            return Err(DecodeError::Invalid);
        }
        let b = byte(code, at)?;
        match b {
            0x40..=0x4f => {
                p.rex = Some(b);
                at += 1;
                continue;
            }
            _ if !is_legacy_prefix(b) => break,
            0x66 => p.operand_size = true,
            0x67 => p.address_size = true,
            0xf2 | 0xf3 => p.rep = Some(b),
            0xf0 => p.lock = true,
            _ => {} // segment overrides and branch hints
        }
        // A legacy prefix after REX leaves that REX without effect.
        p.rex = None;
        at += 1;
    }
    let (end, encoding) = match vector_escape(&code[at..]) {
        Some(encoding) => (vector_operands_end(code, at, encoding, &p)?, encoding),
        None => (legacy_end(code, at, &p)?, Encoding::Legacy),
    };
    if end > MAX_LEN {
        return Err(DecodeError::Invalid);
    }
    if end > code.len() {
        return Err(DecodeError::Truncated);
    }
    Ok(Instruction { len: end, encoding })
}

/// The end of a legacy-encoded instruction whose opcode is at `at`.
fn legacy_end(code: &[u8], at: usize, p: &Prefixes) -> Result<usize, DecodeError> {
    let opcode = byte(code, at)?;
    let (operands_at, operands) = match opcode {
        0xd5 => return Err(DecodeError::Unsupported("APX (the REX2 prefix)")),
        0x0f => match byte(code, at + 1)? {
            0x38 => (at + 3, tables::THREE_BYTE_38[byte(code, at + 2)? as usize]),
            0x3a => (at + 3, tables::THREE_BYTE_3A[byte(code, at + 2)? as usize]),
            second => (at + 2, tables::TWO_BYTE[second as usize]),
        },
        _ => (at + 1, tables::ONE_BYTE[opcode as usize]),
    };
    operands_end(code, operands_at, operands, p)
}

/// The end of the operands (ModRM, SIB, displacement, immediate) at `at`.
fn operands_end(
    code: &[u8],
    at: usize,
    operands: Operands,
    p: &Prefixes,
) -> Result<usize, DecodeError> {
    let modrm_reg = || byte(code, at).map(|m| (m >> 3) & 7);
    Ok(match operands {
        Operands::None => at,
        Operands::ModRm => modrm_end(code, at)?,
        Operands::ModRmRegisters => {
            byte(code, at)?;
            at + 1
        }
        Operands::Imm8 => at + 1,
        Operands::Imm16 => at + 2,
        Operands::ImmZ => at + p.imm_z(),
        Operands::ImmV => {
            at + match (p.rex_w(), p.operand_size) {
                (true, _) => 8,
                (false, true) => 2,
                (false, false) => 4,
            }
        }
        Operands::Moffs => at + if p.address_size { 4 } else { 8 },
        Operands::Enter => at + 3,
        Operands::BranchZ if p.operand_size => {
            return Err(DecodeError::Unsupported(
                "a near branch with the operand-size prefix (Intel and AMD CPUs disagree on its length)",
            ));
        }
        Operands::BranchZ => at + 4,
        Operands::ModRmImm8 => modrm_end(code, at)? + 1,
        Operands::ModRmImmZ => modrm_end(code, at)? + p.imm_z(),
        Operands::Group3Imm8 => modrm_end(code, at)? + usize::from(modrm_reg()? < 2),
        Operands::Group3ImmZ => modrm_end(code, at)? + if modrm_reg()? < 2 { p.imm_z() } else { 0 },
        Operands::SseFourA => {
            let imm = if p.operand_size || p.rep == Some(0xf2) {
                2
            } else {
                0
            };
            modrm_end(code, at)? + imm
        }
        Operands::ThreeDNow => return Err(DecodeError::Unsupported("a 3DNow! instruction")),
        Operands::Prefix | Operands::Invalid => return Err(DecodeError::Invalid),
    })
}

/// The end of a VEX, EVEX or XOP instruction whose escape byte is at `at`.
fn vector_operands_end(
    code: &[u8],
    at: usize,
    encoding: Encoding,
    p: &Prefixes,
) -> Result<usize, DecodeError> {
    // These prefixes before a vector escape make the instruction undefined.
    if p.rex.is_some() || p.operand_size || p.rep.is_some() || p.lock {
        return Err(DecodeError::Invalid);
    }
    let (payload, map) = match (encoding, byte(code, at)?) {
        (Encoding::Vex, 0xc5) => (1, 1),
        (Encoding::Evex, _) => (3, byte(code, at + 1)? & 0x07),
        _ => (2, byte(code, at + 1)? & 0x1f),
    };
    let opcode_at = at + 1 + payload;
    let opcode = byte(code, opcode_at)?;
    let immediate = match (encoding, map) {
        // vzeroupper and vzeroall are the only ones without ModRM.
        (Encoding::Vex, 1) if opcode == 0x77 => return Ok(opcode_at + 1),
        (Encoding::Vex | Encoding::Evex, 1) => usize::from(tables::vex_map1_has_imm8(opcode)),
        (Encoding::Vex | Encoding::Evex, 2) => 0,
        (Encoding::Vex | Encoding::Evex, 3) => 1,
        // AVX512-FP16's maps.
        (Encoding::Evex, 5 | 6) => 0,
        (Encoding::Evex, 4) => return Err(DecodeError::Unsupported("APX (EVEX map 4)")),
        (Encoding::Vex | Encoding::Evex, 7) => {
            return Err(DecodeError::Unsupported("an instruction of VEX/EVEX map 7"));
        }
        (Encoding::Xop, 8) => 1,
        (Encoding::Xop, 9) => 0,
        (Encoding::Xop, 10) => 4,
        _ => return Err(DecodeError::Invalid),
    };
    Ok(modrm_end(code, opcode_at + 1)? + immediate)
}

/// The end of the ModRM byte at `at` with its SIB byte and displacement.
fn modrm_end(code: &[u8], at: usize) -> Result<usize, DecodeError> {
    let modrm = byte(code, at)?;
    let (mode, rm) = (modrm >> 6, modrm & 7);
    let mut end = at + 1;
    if mode == 3 {
        return Ok(end);
    }
    if rm == 4 {
        let sib = byte(code, end)?;
        end += 1;
        // No base register: a 32-bit displacement instead.
        if mode == 0 && sib & 7 == 5 {
            end += 4;
        }
    }
    end += match (mode, rm) {
        // RIP-relative.
        (0, 5) => 4,
        (1, _) => 1,
        (2, _) => 4,
        _ => 0,
    };
    Ok(end)
}
