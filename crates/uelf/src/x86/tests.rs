//! The decoder against a table of encodings, each with its length as
//! objdump (binutils 2.40) prints it: every prefix, opcode map and operand
//! class, and the bytes it refuses.

use super::{DecodeError, Encoding, Placement, decode, is_vector_instruction, place};

fn bytes(hex: &str) -> Vec<u8> {
    hex.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

/// (bytes, length, encoding, what objdump prints)
const LENGTHS: &[(&str, usize, Encoding, &str)] = &[
    // One-byte map: no operands, ModRM forms, SIB, displacements.
    ("55", 1, Encoding::Legacy, "push %rbp"),
    ("c3", 1, Encoding::Legacy, "ret"),
    ("cc", 1, Encoding::Legacy, "int3"),
    ("9b", 1, Encoding::Legacy, "fwait"),
    ("48 89 e5", 3, Encoding::Legacy, "mov %rsp,%rbp"),
    ("41 ff d4", 3, Encoding::Legacy, "call *%r12"),
    ("8b 04 98", 3, Encoding::Legacy, "mov (%rax,%rbx,4),%eax"),
    ("8b 44 24 08", 4, Encoding::Legacy, "mov 0x8(%rsp),%eax"),
    (
        "8b 84 24 00 01 00 00",
        7,
        Encoding::Legacy,
        "mov 0x100(%rsp),%eax",
    ),
    (
        "8b 04 25 00 10 00 00",
        7,
        Encoding::Legacy,
        "mov 0x1000,%eax",
    ),
    (
        "8b 44 05 00",
        4,
        Encoding::Legacy,
        "mov 0x0(%rbp,%rax,1),%eax",
    ),
    (
        "48 8b 05 10 20 30 00",
        7,
        Encoding::Legacy,
        "mov 0x302010(%rip),%rax",
    ),
    (
        "4c 8d 05 f9 ff ff ff",
        7,
        Encoding::Legacy,
        "lea -0x7(%rip),%r8",
    ),
    (
        "8b 80 00 01 00 00",
        6,
        Encoding::Legacy,
        "mov 0x100(%rax),%eax",
    ),
    ("d9 7d fe", 3, Encoding::Legacy, "fnstcw -0x2(%rbp)"),
    ("dd 45 f0", 3, Encoding::Legacy, "fldl -0x10(%rbp)"),
    ("8f c0", 2, Encoding::Legacy, "pop %rax"),
    ("8f 00", 2, Encoding::Legacy, "pop (%rax)"),
    // Legacy prefixes: operand size, segment, rep, lock, branch hints, notrack.
    ("f3 c3", 2, Encoding::Legacy, "repz ret"),
    ("66 90", 2, Encoding::Legacy, "xchg %ax,%ax"),
    (
        "66 2e 0f 1f 84 00 00 00 00 00",
        10,
        Encoding::Legacy,
        "cs nopw 0x0(%rax,%rax,1)",
    ),
    (
        "66 66 2e 0f 1f 84 00 00 00 00 00",
        11,
        Encoding::Legacy,
        "data16 cs nopw 0x0(%rax,%rax,1)",
    ),
    (
        "f0 48 0f b1 0f",
        5,
        Encoding::Legacy,
        "lock cmpxchg %rcx,(%rdi)",
    ),
    (
        "64 48 8b 04 25 28 00 00 00",
        9,
        Encoding::Legacy,
        "mov %fs:0x28,%rax",
    ),
    ("2e 74 05", 3, Encoding::Legacy, "je,pn (hint)"),
    ("3e ff e0", 3, Encoding::Legacy, "notrack jmp *%rax"),
    ("f3 48 ab", 3, Encoding::Legacy, "rep stos %rax,%es:(%rdi)"),
    // A REX prefix before a legacy prefix has no effect but takes its byte
    // (objdump prints it apart, as `rex.W`; the CPU runs one instruction).
    ("48 66 90", 3, Encoding::Legacy, "rex.W / xchg %ax,%ax"),
    // Immediates: 8-bit, z (16 with 66, else 32, REX.W keeps 32), v (64 with REX.W).
    ("6a 01", 2, Encoding::Legacy, "push $0x1"),
    ("68 00 10 00 00", 5, Encoding::Legacy, "push $0x1000"),
    ("66 68 00 10", 4, Encoding::Legacy, "pushw $0x1000"),
    ("04 01", 2, Encoding::Legacy, "add $0x1,%al"),
    (
        "05 78 56 34 12",
        5,
        Encoding::Legacy,
        "add $0x12345678,%eax",
    ),
    ("66 05 34 12", 4, Encoding::Legacy, "add $0x1234,%ax"),
    (
        "48 05 78 56 34 12",
        6,
        Encoding::Legacy,
        "add $0x12345678,%rax",
    ),
    ("80 3f 00", 3, Encoding::Legacy, "cmpb $0x0,(%rdi)"),
    ("81 ff 00 01 00 00", 6, Encoding::Legacy, "cmp $0x100,%edi"),
    ("66 81 ff 00 01", 5, Encoding::Legacy, "cmp $0x100,%di"),
    ("48 83 ec 08", 4, Encoding::Legacy, "sub $0x8,%rsp"),
    (
        "69 c0 10 27 00 00",
        6,
        Encoding::Legacy,
        "imul $0x2710,%eax,%eax",
    ),
    ("6b c0 0a", 3, Encoding::Legacy, "imul $0xa,%eax,%eax"),
    ("c1 e0 04", 3, Encoding::Legacy, "shl $0x4,%eax"),
    ("c6 00 01", 3, Encoding::Legacy, "movb $0x1,(%rax)"),
    ("66 c7 00 34 12", 5, Encoding::Legacy, "movw $0x1234,(%rax)"),
    (
        "48 c7 c0 ff ff ff ff",
        7,
        Encoding::Legacy,
        "mov $0xffffffffffffffff,%rax",
    ),
    (
        "48 c7 44 24 08 01 00 00 00",
        9,
        Encoding::Legacy,
        "movq $0x1,0x8(%rsp)",
    ),
    ("b0 01", 2, Encoding::Legacy, "mov $0x1,%al"),
    (
        "b8 78 56 34 12",
        5,
        Encoding::Legacy,
        "mov $0x12345678,%eax",
    ),
    ("66 b8 34 12", 4, Encoding::Legacy, "mov $0x1234,%ax"),
    (
        "48 b8 88 77 66 55 44 33 22 11",
        10,
        Encoding::Legacy,
        "movabs $0x1122334455667788,%rax",
    ),
    ("a8 01", 2, Encoding::Legacy, "test $0x1,%al"),
    ("a9 00 00 01 00", 5, Encoding::Legacy, "test $0x10000,%eax"),
    ("c2 08 00", 3, Encoding::Legacy, "ret $0x8"),
    ("cd 80", 2, Encoding::Legacy, "int $0x80"),
    ("e4 60", 2, Encoding::Legacy, "in $0x60,%al"),
    // moffs: 64-bit addresses, 32-bit with 67.
    (
        "48 a1 88 77 66 55 44 33 22 11",
        10,
        Encoding::Legacy,
        "movabs 0x1122334455667788,%rax",
    ),
    (
        "67 a1 44 33 22 11",
        6,
        Encoding::Legacy,
        "addr32 mov 0x11223344,%eax",
    ),
    (
        "a2 88 77 66 55 44 33 22 11",
        9,
        Encoding::Legacy,
        "movabs %al,0x1122334455667788",
    ),
    // ENTER: 16- and 8-bit immediates.
    ("c8 10 00 01", 4, Encoding::Legacy, "enter $0x10,$0x1"),
    // Group 3: only /0 and /1 (test) take an immediate.
    ("f6 c1 01", 3, Encoding::Legacy, "test $0x1,%cl"),
    ("f6 c8 01", 3, Encoding::Legacy, "test $0x1,%al (/1)"),
    ("f6 d8", 2, Encoding::Legacy, "neg %al"),
    (
        "f7 c0 78 56 34 12",
        6,
        Encoding::Legacy,
        "test $0x12345678,%eax",
    ),
    ("66 f7 c0 34 12", 5, Encoding::Legacy, "test $0x1234,%ax"),
    (
        "48 f7 c7 00 01 00 00",
        7,
        Encoding::Legacy,
        "test $0x100,%rdi",
    ),
    ("f7 d8", 2, Encoding::Legacy, "neg %eax"),
    ("48 f7 e1", 3, Encoding::Legacy, "mul %rcx"),
    (
        "f6 44 24 08 01",
        5,
        Encoding::Legacy,
        "testb $0x1,0x8(%rsp)",
    ),
    // Branches.
    ("74 05", 2, Encoding::Legacy, "je +5"),
    ("eb fe", 2, Encoding::Legacy, "jmp ."),
    ("e3 fe", 2, Encoding::Legacy, "jrcxz ."),
    ("e8 00 00 00 00", 5, Encoding::Legacy, "call +0"),
    ("e9 00 01 00 00", 5, Encoding::Legacy, "jmp +0x100"),
    ("0f 84 00 01 00 00", 6, Encoding::Legacy, "je +0x100"),
    ("c7 f8 00 01 00 00", 6, Encoding::Legacy, "xbegin +0x100"),
    // Two-byte map.
    ("f3 0f 1e fa", 4, Encoding::Legacy, "endbr64"),
    ("0f 05", 2, Encoding::Legacy, "syscall"),
    ("0f 0b", 2, Encoding::Legacy, "ud2"),
    ("0f a2", 2, Encoding::Legacy, "cpuid"),
    ("0f 1f 00", 3, Encoding::Legacy, "nopl (%rax)"),
    (
        "0f 1f 44 00 00",
        5,
        Encoding::Legacy,
        "nopl 0x0(%rax,%rax,1)",
    ),
    (
        "0f 1f 80 00 00 00 00",
        7,
        Encoding::Legacy,
        "nopl 0x0(%rax)",
    ),
    ("0f 01 d0", 3, Encoding::Legacy, "xgetbv"),
    ("0f ae e8", 3, Encoding::Legacy, "lfence"),
    ("0f 20 c0", 3, Encoding::Legacy, "mov %cr0,%rax"),
    // mov to/from a control register ignores its mode bits: no displacement.
    ("0f 22 40", 3, Encoding::Legacy, "mov %rax,%cr0"),
    ("0f b6 c0", 3, Encoding::Legacy, "movzbl %al,%eax"),
    ("48 0f af c1", 4, Encoding::Legacy, "imul %rcx,%rax"),
    ("f3 0f b8 c0", 4, Encoding::Legacy, "popcnt %eax,%eax"),
    ("f3 48 0f bc c7", 5, Encoding::Legacy, "tzcnt %rdi,%rax"),
    ("0f ba e0 03", 4, Encoding::Legacy, "bt $0x3,%eax"),
    ("0f a4 c2 04", 4, Encoding::Legacy, "shld $0x4,%eax,%edx"),
    ("0f c8", 2, Encoding::Legacy, "bswap %eax"),
    ("66 0f 6f 07", 4, Encoding::Legacy, "movdqa (%rdi),%xmm0"),
    (
        "66 0f 70 c1 1b",
        5,
        Encoding::Legacy,
        "pshufd $0x1b,%xmm1,%xmm0",
    ),
    ("66 0f 73 d8 08", 5, Encoding::Legacy, "psrldq $0x8,%xmm0"),
    ("0f c2 c1 00", 4, Encoding::Legacy, "cmpeqps %xmm1,%xmm0"),
    (
        "66 0f c4 c0 01",
        5,
        Encoding::Legacy,
        "pinsrw $0x1,%eax,%xmm0",
    ),
    ("66 0f d7 c0", 4, Encoding::Legacy, "pmovmskb %xmm0,%eax"),
    (
        "66 0f 78 c0 04 08",
        6,
        Encoding::Legacy,
        "extrq $0x8,$0x4,%xmm0",
    ),
    (
        "f2 0f 78 c1 04 08",
        6,
        Encoding::Legacy,
        "insertq $0x8,$0x4,%xmm1,%xmm0",
    ),
    ("0f 78 c0", 3, Encoding::Legacy, "vmread %rax,%rax"),
    ("0f 0d 08", 3, Encoding::Legacy, "prefetchw (%rax)"),
    ("0f ff 00", 3, Encoding::Legacy, "ud0 (%rax),%eax"),
    // Three-byte maps 0F38 (no immediates) and 0F3A (imm8).
    ("66 0f 38 00 c1", 5, Encoding::Legacy, "pshufb %xmm1,%xmm0"),
    ("66 0f 38 17 c1", 5, Encoding::Legacy, "ptest %xmm1,%xmm0"),
    ("f2 0f 38 f1 c1", 5, Encoding::Legacy, "crc32l %ecx,%eax"),
    ("0f 38 f0 07", 4, Encoding::Legacy, "movbe (%rdi),%eax"),
    ("66 0f 38 dc c1", 5, Encoding::Legacy, "aesenc %xmm1,%xmm0"),
    (
        "66 0f 3a 0f c1 08",
        6,
        Encoding::Legacy,
        "palignr $0x8,%xmm1,%xmm0",
    ),
    (
        "66 0f 3a 63 c1 3a",
        6,
        Encoding::Legacy,
        "pcmpistri $0x3a,%xmm1,%xmm0",
    ),
    (
        "66 0f 3a 44 c1 00",
        6,
        Encoding::Legacy,
        "pclmullqlqdq %xmm1,%xmm0",
    ),
    (
        "66 0f 3a 16 c0 01",
        6,
        Encoding::Legacy,
        "pextrd $0x1,%xmm0,%eax",
    ),
    // VEX, two- and three-byte.
    ("c5 f9 ef c0", 4, Encoding::Vex, "vpxor %xmm0,%xmm0,%xmm0"),
    ("c5 fe 6f 07", 4, Encoding::Vex, "vmovdqu (%rdi),%ymm0"),
    (
        "c5 fe 6f 0d 00 10 00 00",
        8,
        Encoding::Vex,
        "vmovdqu 0x1000(%rip),%ymm1",
    ),
    (
        "c5 fe 6f 04 98",
        5,
        Encoding::Vex,
        "vmovdqu (%rax,%rbx,4),%ymm0",
    ),
    (
        "c5 fe 6f 44 24 10",
        6,
        Encoding::Vex,
        "vmovdqu 0x10(%rsp),%ymm0",
    ),
    ("c5 f8 77", 3, Encoding::Vex, "vzeroupper"),
    (
        "c5 f9 70 c1 1b",
        5,
        Encoding::Vex,
        "vpshufd $0x1b,%xmm1,%xmm0",
    ),
    ("c5 f8 93 c1", 4, Encoding::Vex, "kmovw %k1,%eax"),
    (
        "c4 e2 7d 78 c0",
        5,
        Encoding::Vex,
        "vpbroadcastb %xmm0,%ymm0",
    ),
    ("c4 e2 f8 f2 c1", 5, Encoding::Vex, "andn %rcx,%rax,%rax"),
    (
        "c4 e3 71 0f c2 04",
        6,
        Encoding::Vex,
        "vpalignr $0x4,%xmm2,%xmm1,%xmm0",
    ),
    ("c4 e3 fb f0 c0 05", 6, Encoding::Vex, "rorx $0x5,%rax,%rax"),
    (
        "c4 e3 7d 46 c1 01",
        6,
        Encoding::Vex,
        "vperm2i128 $0x1,%ymm1,%ymm0,%ymm0",
    ),
    // EVEX: maps 1, 2, 3, 5 and 6; disp8 is scaled but still one byte.
    (
        "62 e2 7d 28 7a ce",
        6,
        Encoding::Evex,
        "vpbroadcastb %esi,%ymm17",
    ),
    (
        "62 e1 fe 28 6f 17",
        6,
        Encoding::Evex,
        "vmovdqu64 (%rdi),%ymm18",
    ),
    (
        "62 f1 7d 20 74 4f 01",
        7,
        Encoding::Evex,
        "vpcmpeqb 0x20(%rdi),%ymm16,%k1",
    ),
    (
        "62 f1 7d 48 72 c0 05",
        7,
        Encoding::Evex,
        "vprord $0x5,%zmm0,%zmm0",
    ),
    (
        "62 f3 7d 28 3f c1 00",
        7,
        Encoding::Evex,
        "vpcmpeqb %ymm1,%ymm0,%k0",
    ),
    (
        "62 f5 7c 08 58 c1",
        6,
        Encoding::Evex,
        "vaddph %xmm1,%xmm0,%xmm0",
    ),
    (
        "62 f6 7d 08 98 c1",
        6,
        Encoding::Evex,
        "vfmadd132ph %xmm1,%xmm0,%xmm0",
    ),
    // XOP: map 8 (imm8), 9 (none), 10 (imm32).
    (
        "8f e8 78 c0 c1 01",
        6,
        Encoding::Xop,
        "vprotb $0x1,%xmm1,%xmm0",
    ),
    (
        "8f e9 78 90 c1",
        5,
        Encoding::Xop,
        "vprotb %xmm0,%xmm1,%xmm0",
    ),
    (
        "8f ea 78 10 c0 04 00 00 00",
        9,
        Encoding::Xop,
        "bextr $0x4,%eax,%eax",
    ),
    // The longest: 14 prefixes and nop (objdump prints the prefixes apart).
    (
        "66 66 66 66 66 66 66 66 66 66 66 66 66 66 90",
        15,
        Encoding::Legacy,
        "data16 ... xchg %ax,%ax",
    ),
];

#[test]
fn lengths_of_every_prefix_map_and_operand_class() {
    for (hex, len, encoding, what) in LENGTHS {
        let code = bytes(hex);
        assert_eq!(
            decode(&code),
            Ok(super::Instruction {
                len: *len,
                encoding: *encoding
            }),
            "{hex} ({what})"
        );
        // Bytes after the instruction do not change it.
        let mut longer = code.clone();
        longer.extend_from_slice(&[0xc3; 16]);
        assert_eq!(decode(&longer).map(|i| i.len), Ok(*len), "{hex} ({what})");
        // One byte short is too short.
        assert_eq!(
            decode(&code[..code.len() - 1]),
            Err(DecodeError::Truncated),
            "{hex} cut short ({what})"
        );
    }
}

#[test]
fn bytes_it_refuses() {
    let unsupported = |hex: &str| match decode(&bytes(hex)) {
        Err(DecodeError::Unsupported(what)) => what,
        other => panic!("{hex}: {other:?}"),
    };
    assert!(unsupported("0f 0f c1 b4").contains("3DNow!"), "pfmul");
    assert!(unsupported("0f 0e").contains("3DNow!"), "femms");
    assert!(unsupported("d5 08 01 c0").contains("APX"), "REX2");
    assert!(
        unsupported("62 f4 7c 18 01 c1").contains("APX"),
        "EVEX map 4"
    );
    assert!(unsupported("c4 e7 7b f8 c0 00 00 00 00").contains("map 7"));
    // A 66-prefixed near branch is 3 bytes on AMD and 6 on Intel: refused.
    assert!(unsupported("66 e8 00 00 00 00").contains("Intel and AMD"));
    assert!(unsupported("66 0f 84 00 00 00 00").contains("Intel and AMD"));
    for (hex, what) in [
        ("06", "push %es"),
        ("27", "daa"),
        ("60", "pusha"),
        ("82 c0 01", "82 alias of group 1"),
        ("9a 00 00 00 00 00 00", "far call"),
        ("ce", "into"),
        ("d4 0a", "aam"),
        ("ea 00 00 00 00 00 00", "far jmp"),
        ("0f 04", "0F 04"),
        ("0f 24 c0", "mov %tr"),
        ("0f 38 50 c0", "an unknown 0F38 opcode"),
        ("0f 3a 00 c0 00", "a VEX-only 0F3A opcode"),
        ("66 c5 f9 ef c0", "66 before VEX"),
        ("48 c5 f9 ef c0", "REX before VEX"),
        ("c4 e0 7d 78 c0", "VEX map 0"),
        ("62 f0 7d 28 7a ce", "EVEX map 0"),
        ("8f eb 78 90 c1", "XOP map 11"),
    ] {
        assert_eq!(
            decode(&bytes(hex)),
            Err(DecodeError::Invalid),
            "{hex}: {what}"
        );
    }
    // 15 prefixes leave no room for an opcode.
    let mut long = vec![0x66; 15];
    long.push(0x90);
    assert_eq!(decode(&long), Err(DecodeError::Invalid));
    // A ModRM that needs a 32-bit displacement pushes past 15 bytes.
    let mut long = vec![0x66; 10];
    long.extend_from_slice(&bytes("c7 84 24 00 01 00 00 34 12"));
    assert_eq!(decode(&long), Err(DecodeError::Invalid));
    assert_eq!(decode(&[]), Err(DecodeError::Truncated));
    assert_eq!(decode(&[0x66, 0x66]), Err(DecodeError::Truncated));
}

#[test]
fn offsets_placed_among_the_instructions_of_a_function() {
    // push %rbp; mov %rsp,%rbp; lea (%rdi,%rdi,1),%eax; pop %rbp; ret
    let code = bytes("55 48 89 e5 8d 04 3f 5d c3");
    let boundaries = [0, 1, 4, 7, 8, 9];
    for offset in 0..=9 {
        let placed = place(&code, offset);
        if boundaries.contains(&offset) {
            assert_eq!(placed, Placement::Boundary, "+{offset}");
        } else {
            let (start, len) = if offset < 4 { (1, 3) } else { (4, 3) };
            assert_eq!(placed, Placement::Inside { start, len }, "+{offset}");
        }
    }
    // Decoding stops at a 3DNow! instruction before the offset: unchecked.
    let code = bytes("55 0f 0f c1 b4 c3");
    assert_eq!(place(&code, 1), Placement::Boundary);
    assert_eq!(
        place(&code, 5),
        Placement::Undecodable {
            at: 1,
            error: DecodeError::Unsupported("a 3DNow! instruction")
        }
    );
    // Past the bytes given: the last instruction is cut short.
    assert_eq!(
        place(&bytes("55 48 89"), 3),
        Placement::Undecodable {
            at: 1,
            error: DecodeError::Truncated
        }
    );
}

#[test]
fn vector_encodings_are_recognised() {
    // vpbroadcastb %esi,%ymm17 (EVEX), glibc's __strchr_evex entry.
    assert!(is_vector_instruction(&[0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xce]));
    // vmovdqu (%rdi),%ymm0 (two-byte VEX) and vpbroadcastb (three-byte VEX).
    assert!(is_vector_instruction(&[0xc5, 0xfe, 0x6f, 0x07]));
    assert!(is_vector_instruction(&[0xc4, 0xe2, 0x7d, 0x78, 0xc6]));
    // XOP vprotb, and a VEX escape behind an operand-size prefix (which the
    // decoder refuses, but a probe must not go there either).
    assert!(is_vector_instruction(&[0x8f, 0xe9, 0x78, 0x90, 0xc1]));
    assert!(is_vector_instruction(&[0x66, 0xc5, 0xf9, 0xef, 0xc0]));
    // Cut short after the escape: still vector-encoded.
    assert!(is_vector_instruction(&[0xc5, 0xfe, 0x6f]));
    for (hex, _, encoding, what) in LENGTHS {
        assert_eq!(
            is_vector_instruction(&bytes(hex)),
            *encoding != Encoding::Legacy,
            "{hex} ({what})"
        );
    }
}

#[test]
fn ordinary_instructions_are_not() {
    assert!(!is_vector_instruction(&[0x89, 0xf8])); // mov %edi,%eax
    assert!(!is_vector_instruction(&[0xf3, 0x0f, 0x1e, 0xfa])); // endbr64
    assert!(!is_vector_instruction(&[0x8f, 0xc0])); // pop %rax
    assert!(!is_vector_instruction(&[]));
    assert!(!is_vector_instruction(&[0x66]));
}
