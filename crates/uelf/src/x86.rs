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

#[cfg(test)]
mod tests {
    use super::is_vector_instruction;

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
