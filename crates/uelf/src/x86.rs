//! The one x86-64 instruction fact uprobes need: whether an instruction is
//! vector-encoded (VEX, EVEX or XOP). The kernel single-steps a uprobe's
//! instruction out of line; on this project's test kernel (6.18) it accepts
//! an EVEX instruction such as glibc's `vpbroadcastb %esi,%ymm17` at the
//! entry of `__strchr_evex` and then loses its result now and then, which
//! corrupts every process that calls the function (printf, bash, cc). So
//! weft never places a uprobe on one, whatever the kernel would accept.

/// Legacy prefixes that may precede a VEX/EVEX escape byte in the encoding
/// (a decoder that sees them treats the escape as part of the instruction).
const LEGACY_PREFIXES: [u8; 11] = [
    0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65,
];

/// Whether the instruction that `code` begins with is VEX (`c4`, `c5`),
/// EVEX (`62`) or XOP (`8f` with a map select of 8 or more) encoded, in
/// 64-bit mode. Too few bytes to tell count as not vector-encoded.
pub fn is_vector_instruction(code: &[u8]) -> bool {
    let mut rest = code;
    while let Some((&b, tail)) = rest.split_first() {
        if LEGACY_PREFIXES.contains(&b) {
            rest = tail;
        } else {
            break;
        }
    }
    match rest {
        [0xc4 | 0xc5 | 0x62, ..] => true,
        // 8f /0 is `pop r/m`; XOP's map select (the low five bits) is 8..=10.
        [0x8f, next, ..] => next & 0x1f >= 8,
        _ => false,
    }
}

/// The length in bytes of the vector-encoded (VEX, EVEX or XOP)
/// instruction that `code` begins with, so a probe can go on the next one.
/// `None` when `code` does not begin with one, is cut short, or uses an
/// opcode map whose immediates are not known here.
pub fn vector_instruction_len(code: &[u8]) -> Option<usize> {
    if !is_vector_instruction(code) {
        return None;
    }
    let prefixes = code
        .iter()
        .take_while(|b| LEGACY_PREFIXES.contains(b))
        .count();
    let rest = &code[prefixes..];
    // The escape bytes, the opcode map they select, and whether W is set.
    let (escape_len, map) = match rest {
        [0xc5, ..] => (2, 1),
        [0xc4 | 0x8f, p1, ..] => (3, p1 & 0x1f),
        [0x62, p0, ..] => (4, p0 & 0x07),
        _ => return None,
    };
    let opcode = *rest.get(escape_len)?;
    let mut len = prefixes + escape_len + 1;
    // VZEROUPPER/VZEROALL (VEX 0F 77) are the only ones without ModRM.
    if rest[0] != 0x62 && rest[0] != 0x8f && map == 1 && opcode == 0x77 {
        return Some(len);
    }
    let modrm = *code.get(len)?;
    len += 1;
    let (mode, rm) = (modrm >> 6, modrm & 7);
    if mode != 3 && rm == 4 {
        let sib = *code.get(len)?;
        len += 1;
        if mode == 0 && sib & 7 == 5 {
            len += 4;
        }
    }
    len += match (mode, rm) {
        (1, _) => 1,
        (2, _) | (0, 5) => 4,
        _ => 0,
    };
    let immediate = match (rest[0], map) {
        // XOP: map 8 takes an imm8, map 9 none, map 10 an imm32.
        (0x8f, 8) => 1,
        (0x8f, 9) => 0,
        (0x8f, 10) => 4,
        (0x8f, _) => return None,
        // 0F: the shuffles, shifts by immediate, compares and inserts/extracts.
        (_, 1) => usize::from(matches!(opcode, 0x70..=0x73 | 0xc2 | 0xc4..=0xc6)),
        // 0F38 has no immediates, 0F3A always one byte.
        (_, 2) => 0,
        (_, 3) => 1,
        // EVEX maps 5 and 6 (FP16) have no immediates.
        (0x62, 5 | 6) => 0,
        _ => return None,
    };
    let len = len + immediate;
    (len <= code.len()).then_some(len)
}

#[cfg(test)]
mod tests {
    use super::{is_vector_instruction, vector_instruction_len};

    #[test]
    fn vector_instruction_lengths() {
        // vpbroadcastb %esi,%ymm17 (EVEX), glibc's __strchr_evex entry.
        assert_eq!(
            vector_instruction_len(&[0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xce, 0x89]),
            Some(6)
        );
        // vmovdqu64 (%rdi),%ymm18 (EVEX, memory operand).
        assert_eq!(
            vector_instruction_len(&[0x62, 0xe1, 0xfe, 0x28, 0x6f, 0x17]),
            Some(6)
        );
        // vpcmpeqb 0x20(%rdi),%ymm16,%k1 (EVEX, disp8 scaled by 32).
        assert_eq!(
            vector_instruction_len(&[0x62, 0xf1, 0x7d, 0x20, 0x74, 0x4f, 0x01]),
            Some(7)
        );
        // vpxor %xmm0,%xmm0,%xmm0 (two-byte VEX): the fixture's vector_entry.
        assert_eq!(
            vector_instruction_len(&[0xc5, 0xf9, 0xef, 0xc0, 0xc3]),
            Some(4)
        );
        // vmovdqu (%rdi),%ymm0 (two-byte VEX, memory operand).
        assert_eq!(vector_instruction_len(&[0xc5, 0xfe, 0x6f, 0x07]), Some(4));
        // vmovdqu 0x1000(%rip),%ymm1 (RIP-relative: disp32).
        assert_eq!(
            vector_instruction_len(&[0xc5, 0xfe, 0x6f, 0x0d, 0, 0x10, 0, 0]),
            Some(8)
        );
        // vpbroadcastb %xmm0,%ymm0 (three-byte VEX, map 0F38).
        assert_eq!(
            vector_instruction_len(&[0xc4, 0xe2, 0x7d, 0x78, 0xc0]),
            Some(5)
        );
        // vpshufd $0x1b,%xmm1,%xmm0 (0F 70 takes an imm8).
        assert_eq!(
            vector_instruction_len(&[0xc5, 0xf9, 0x70, 0xc1, 0x1b]),
            Some(5)
        );
        // vpalignr $0x4,%xmm2,%xmm1,%xmm0 (0F3A: imm8).
        assert_eq!(
            vector_instruction_len(&[0xc4, 0xe3, 0x71, 0x0f, 0xc2, 0x04]),
            Some(6)
        );
        // vmovdqu (%rax,%rbx,4),%ymm0 (SIB) and vmovdqu 0x10(%rsp),%ymm0 (SIB + disp8).
        assert_eq!(
            vector_instruction_len(&[0xc5, 0xfe, 0x6f, 0x04, 0x98]),
            Some(5)
        );
        assert_eq!(
            vector_instruction_len(&[0xc5, 0xfe, 0x6f, 0x44, 0x24, 0x10]),
            Some(6)
        );
        // vzeroupper has no ModRM.
        assert_eq!(vector_instruction_len(&[0xc5, 0xf8, 0x77, 0xc3]), Some(3));
        // XOP vprotb $1,%xmm1,%xmm0 (map 8: imm8).
        assert_eq!(
            vector_instruction_len(&[0x8f, 0xe8, 0x78, 0xc0, 0xc1, 0x01]),
            Some(6)
        );
        // Not vector, or cut short.
        assert_eq!(vector_instruction_len(&[0x89, 0xf8]), None);
        assert_eq!(vector_instruction_len(&[0xc5, 0xfe, 0x6f]), None);
        assert_eq!(
            vector_instruction_len(&[0xc5, 0xfe, 0x6f, 0x0d, 0, 0x10]),
            None
        );
    }

    #[test]
    fn vector_encodings_are_recognised() {
        // vpbroadcastb %esi,%ymm17 (EVEX), glibc's __strchr_evex entry.
        assert!(is_vector_instruction(&[0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xce]));
        // vmovdqu (%rdi),%ymm0 (two-byte VEX) and vpxor (three-byte VEX).
        assert!(is_vector_instruction(&[0xc5, 0xfe, 0x6f, 0x07]));
        assert!(is_vector_instruction(&[0xc4, 0xe2, 0x7d, 0x78, 0xc6]));
        // XOP vprotb, and a VEX instruction behind an operand-size prefix.
        assert!(is_vector_instruction(&[0x8f, 0xe9, 0x78, 0x90, 0xc1]));
        assert!(is_vector_instruction(&[0x66, 0xc5, 0xf9, 0xef, 0xc0]));
    }

    #[test]
    fn ordinary_instructions_are_not() {
        assert!(!is_vector_instruction(&[0x89, 0xf8])); // mov %edi,%eax
        assert!(!is_vector_instruction(&[0xf3, 0x0f, 0x1e, 0xfa])); // endbr64
        assert!(!is_vector_instruction(&[0x55])); // push %rbp
        assert!(!is_vector_instruction(&[0x8f, 0xc0])); // pop %rax
        assert!(!is_vector_instruction(&[0x48, 0x89, 0xe5])); // mov %rsp,%rbp
        assert!(!is_vector_instruction(&[]));
        assert!(!is_vector_instruction(&[0x66]));
    }
}
