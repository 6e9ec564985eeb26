//! A bpftool-like disassembler for [`Function`]s.

use std::collections::HashMap;
use std::fmt::Write;

use crate::asm::{Function, Helper};
use crate::insn::*;

/// One line per instruction, `index: text`; an `ld_imm64` is one line and
/// takes two indices. Where a program is joined with its subprograms
/// ([`crate::link`]), each subprogram starts with a `NAME:` line.
pub fn disasm(f: &Function) -> String {
    let relocs: HashMap<usize, &str> = f
        .relocs
        .iter()
        .chain(&f.func_refs)
        .map(|r| (r.insn, r.symbol.as_str()))
        .collect();
    // Resolved references: where each subprogram starts.
    let starts: HashMap<usize, &str> = f
        .func_refs
        .iter()
        .filter(|r| f.insns.get(r.insn).is_some_and(|i| i.imm != 0))
        .map(|r| {
            (
                (r.insn as i64 + 1 + f.insns[r.insn].imm as i64) as usize,
                r.symbol.as_str(),
            )
        })
        .collect();
    let mut out = String::new();
    let mut i = 0;
    while i < f.insns.len() {
        if let Some(name) = starts.get(&i) {
            let _ = writeln!(out, "{name}:");
        }
        let insn = f.insns[i];
        let text = if insn.is_ld_imm64() {
            let hi = f.insns.get(i + 1).map_or(0, |n| n.imm);
            let text = ld_imm64(insn, hi, relocs.get(&i).copied());
            let _ = writeln!(out, "{i:4}: {text}");
            i += 2;
            continue;
        } else {
            insn_text(&insn)
        };
        let _ = writeln!(out, "{i:4}: {text}");
        i += 1;
    }
    out
}

fn ld_imm64(insn: Insn, hi: i32, symbol: Option<&str>) -> String {
    let d = insn.dst;
    if insn.src == PSEUDO_MAP_FD {
        match symbol {
            Some(s) => format!("r{d} = map[{s}]"),
            None => format!("r{d} = map[fd:{}]", insn.imm),
        }
    } else if insn.src == PSEUDO_BTF_ID {
        format!("r{d} = btf_var[{}]", insn.imm)
    } else if insn.src == PSEUDO_FUNC {
        match symbol {
            Some(s) => format!("r{d} = func[{s}]"),
            None => format!("r{d} = func[pc{:+}]", insn.imm),
        }
    } else {
        let v = ((hi as u32 as u64) << 32) | insn.imm as u32 as u64;
        format!("r{d} = {v:#x} ll")
    }
}

fn size_name(code: u8) -> &'static str {
    match Size::from_bits(code) {
        Size::B => "u8",
        Size::H => "u16",
        Size::W => "u32",
        Size::DW => "u64",
    }
}

fn mem(reg: u8, off: i16) -> String {
    if off < 0 {
        format!("r{reg} - {}", -(off as i32))
    } else {
        format!("r{reg} + {off}")
    }
}

fn hex(imm: i32) -> String {
    if imm < 0 {
        format!("-{:#x}", -(imm as i64))
    } else {
        format!("{imm:#x}")
    }
}

fn target(off: i16) -> String {
    if off < 0 {
        format!("{off}")
    } else {
        format!("+{off}")
    }
}

/// The text of one (non-`ld_imm64`) instruction.
pub fn insn_text(insn: &Insn) -> String {
    let (d, s, off, imm) = (insn.dst, insn.src, insn.off, insn.imm);
    let code = insn.code;
    match insn.class() {
        CLASS_ALU | CLASS_ALU64 => {
            let p = if insn.class() == CLASS_ALU64 {
                "r"
            } else {
                "w"
            };
            let op = code & OP_MASK;
            let rhs = if code & SRC_X != 0 {
                format!("{p}{s}")
            } else {
                format!("{imm}")
            };
            let sym = match (op, off) {
                (ALU_ADD, _) => "+=",
                (ALU_SUB, _) => "-=",
                (ALU_MUL, _) => "*=",
                (ALU_DIV, 1) => "s/=",
                (ALU_DIV, _) => "/=",
                (ALU_MOD, 1) => "s%=",
                (ALU_MOD, _) => "%=",
                (ALU_OR, _) => "|=",
                (ALU_AND, _) => "&=",
                (ALU_XOR, _) => "^=",
                (ALU_LSH, _) => "<<=",
                (ALU_RSH, _) => ">>=",
                (ALU_ARSH, _) => "s>>=",
                (ALU_MOV, _) => "=",
                (ALU_NEG, _) => return format!("{p}{d} = -{p}{d}"),
                _ => return format!("<unknown {code:#04x}>"),
            };
            format!("{p}{d} {sym} {rhs}")
        }
        CLASS_LDX => format!("r{d} = *({} *)({})", size_name(code), mem(s, off)),
        CLASS_STX if code & MODE_MASK == MODE_ATOMIC && imm == ATOMIC_ADD => {
            format!("lock *({} *)({}) += r{s}", size_name(code), mem(d, off))
        }
        CLASS_STX if code & MODE_MASK == MODE_ATOMIC && imm == ATOMIC_FETCH_ADD => {
            format!(
                "r{s} = fetch_add(*({} *)({}), r{s})",
                size_name(code),
                mem(d, off)
            )
        }
        CLASS_STX if code & MODE_MASK == MODE_ATOMIC && imm == ATOMIC_XCHG => {
            format!(
                "r{s} = xchg(*({} *)({}), r{s})",
                size_name(code),
                mem(d, off)
            )
        }
        CLASS_STX => format!("*({} *)({}) = r{s}", size_name(code), mem(d, off)),
        CLASS_ST => format!("*({} *)({}) = {imm}", size_name(code), mem(d, off)),
        CLASS_JMP | CLASS_JMP32 => {
            let op = code & OP_MASK;
            let p = if insn.class() == CLASS_JMP { "r" } else { "w" };
            let rhs = if code & SRC_X != 0 {
                format!("{p}{s}")
            } else {
                hex(imm)
            };
            let sym = match op {
                JMP_JA => return format!("goto {}", target(off)),
                JMP_CALL if s == crate::insn::PSEUDO_KFUNC_CALL => {
                    return format!("call kfunc#{imm}");
                }
                JMP_CALL => {
                    return match Helper(imm as u32).name() {
                        Some(n) => format!("call {n}#{imm}"),
                        None => format!("call #{imm}"),
                    };
                }
                JMP_EXIT => return "exit".to_string(),
                JMP_JEQ => "==",
                JMP_JNE => "!=",
                JMP_JGT => ">",
                JMP_JGE => ">=",
                JMP_JLT => "<",
                JMP_JLE => "<=",
                JMP_JSGT => "s>",
                JMP_JSGE => "s>=",
                JMP_JSLT => "s<",
                JMP_JSLE => "s<=",
                JMP_JSET => "&",
                _ => return format!("<unknown {code:#04x}>"),
            };
            format!("if {p}{d} {sym} {rhs} goto {}", target(off))
        }
        _ => format!("<unknown {code:#04x}>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let cases: &[(Insn, &str)] = &[
            (
                Insn::ldx(Size::W, Reg::R1, Reg::R6, 8),
                "r1 = *(u32 *)(r6 + 8)",
            ),
            (
                Insn::stx(Size::DW, Reg::R10, -8, Reg::R1),
                "*(u64 *)(r10 - 8) = r1",
            ),
            (Insn::st(Size::W, Reg::R10, -4, 0), "*(u32 *)(r10 - 4) = 0"),
            (Insn::call(1), "call bpf_map_lookup_elem#1"),
            (
                Insn::jmp_imm(JmpCode::Eq, Reg::R0, 0, 3),
                "if r0 == 0x0 goto +3",
            ),
            (
                Insn::jmp_reg(JmpCode::SLt, Reg::R1, Reg::R2, -4),
                "if r1 s< r2 goto -4",
            ),
            (Insn::alu64_imm(AluCode::Add, Reg::R2, -8), "r2 += -8"),
            (Insn::alu32_reg(AluCode::Mov, Reg::R2, Reg::R3), "w2 = w3"),
            (
                Insn::alu64_reg(AluCode::SMod, Reg::R2, Reg::R3),
                "r2 s%= r3",
            ),
            (Insn::neg64(Reg::R4), "r4 = -r4"),
            (
                Insn::atomic_add(Size::DW, Reg::R0, 0, Reg::R1),
                "lock *(u64 *)(r0 + 0) += r1",
            ),
            (Insn::ja(-1), "goto -1"),
            (Insn::exit(), "exit"),
        ];
        for (insn, want) in cases {
            assert_eq!(insn_text(insn), *want);
        }
    }
}
