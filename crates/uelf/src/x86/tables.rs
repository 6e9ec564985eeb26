//! The opcode maps of x86-64, one grid per map, laid out as the opcode
//! tables of the Intel SDM's appendix A (a row per high nibble, a column
//! per low nibble), saying for each opcode what follows it: a ModRM byte,
//! an immediate, both, or nothing, and which opcodes 64-bit mode lacks.
//! Only lengths are described here; what an instruction does is not.
//!
//! The letters of the grids:
//!
//! | letter | what follows the opcode |
//! |---|---|
//! | `-` | nothing |
//! | `m` | ModRM (with SIB and displacement as it says) |
//! | `r` | ModRM that always names registers (`mov` to/from CRn/DRn: no SIB, no displacement) |
//! | `b` `w` | an 8- or 16-bit immediate |
//! | `z` | a 16-bit immediate with the operand-size prefix, otherwise 32-bit |
//! | `v` | `mov r, imm`: 64-bit with REX.W, 16-bit with the operand-size prefix, otherwise 32-bit |
//! | `o` | a `moffs` address: 64-bit, or 32-bit with the address-size prefix |
//! | `e` | `enter`: a 16-bit and an 8-bit immediate |
//! | `j` | a 32-bit branch displacement (`call`, `jmp`, `jcc`) |
//! | `B` `Z` | ModRM, then an 8-bit or a `z` immediate |
//! | `t` `T` | group 3 (`F6`, `F7`): ModRM, then an 8-bit or a `z` immediate for `/0` and `/1` (`test`) only |
//! | `Q` | `0F 78`: ModRM, then two 8-bit immediates with `66` or `F2` (SSE4a `extrq`/`insertq`) |
//! | `3` | 3DNow! (not decoded) |
//! | `*` | a prefix or escape, taken before the table is read |
//! | `x` | not an instruction in 64-bit mode |

/// What follows an opcode byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Operands {
    None,
    ModRm,
    ModRmRegisters,
    Imm8,
    Imm16,
    ImmZ,
    ImmV,
    Moffs,
    Enter,
    BranchZ,
    ModRmImm8,
    ModRmImmZ,
    Group3Imm8,
    Group3ImmZ,
    SseFourA,
    ThreeDNow,
    Prefix,
    Invalid,
}

const fn operands(letter: u8) -> Operands {
    match letter {
        b'-' => Operands::None,
        b'm' => Operands::ModRm,
        b'r' => Operands::ModRmRegisters,
        b'b' => Operands::Imm8,
        b'w' => Operands::Imm16,
        b'z' => Operands::ImmZ,
        b'v' => Operands::ImmV,
        b'o' => Operands::Moffs,
        b'e' => Operands::Enter,
        b'j' => Operands::BranchZ,
        b'B' => Operands::ModRmImm8,
        b'Z' => Operands::ModRmImmZ,
        b't' => Operands::Group3Imm8,
        b'T' => Operands::Group3ImmZ,
        b'Q' => Operands::SseFourA,
        b'3' => Operands::ThreeDNow,
        b'*' => Operands::Prefix,
        b'x' => Operands::Invalid,
        _ => panic!("unknown letter in an opcode grid"),
    }
}

/// A map from its 16 rows of 16 letters (a wrong row length does not compile).
const fn grid(rows: [&str; 16]) -> [Operands; 256] {
    let mut table = [Operands::Invalid; 256];
    let mut row = 0;
    while row < 16 {
        let letters = rows[row].as_bytes();
        assert!(letters.len() == 16, "an opcode grid row has 16 letters");
        let mut column = 0;
        while column < 16 {
            table[row * 16 + column] = operands(letters[column]);
            column += 1;
        }
        row += 1;
    }
    table
}

/// The one-byte opcodes (SDM table A-2), in 64-bit mode.
pub(super) const ONE_BYTE: [Operands; 256] = grid([
    "mmmmbzxxmmmmbzx*", // 0: add, or; push/pop es/cs are gone; 0F escapes
    "mmmmbzxxmmmmbzxx", // 1: adc, sbb
    "mmmmbz*xmmmmbz*x", // 2: and, sub; es/cs overrides; daa, das are gone
    "mmmmbz*xmmmmbz*x", // 3: xor, cmp; ss/ds overrides; aaa, aas are gone
    "****************", // 4: REX
    "----------------", // 5: push, pop
    "xx*m****zZbB----", // 6: pusha, popa gone; EVEX; movsxd; prefixes; push/imul imm; ins, outs
    "bbbbbbbbbbbbbbbb", // 7: jcc rel8
    "BZxBmmmmmmmmmmmm", // 8: group 1; test, xchg, mov, lea, pop r/m (or XOP)
    "----------x-----", // 9: xchg, cbw, cwd; far call is gone; fwait, pushf, popf, sahf, lahf
    "oooo----bz------", // A: mov moffs; movs, cmps; test imm; stos, lods, scas
    "bbbbbbbbvvvvvvvv", // B: mov imm
    "BBw-**BZe-w--bx-", // C: shifts, ret, VEX, mov imm, enter, leave, retf, int3, int, iret
    "mmmmx*x-mmmmmmmm", // D: shifts; aam/aad gone (D5 is APX's REX2); xlat; x87
    "bbbbbbbbjjxb----", // E: loop, jrcxz, in, out; call, jmp; far jmp is gone
    "*-**--tT------mm", // F: lock, int1, rep; hlt, cmc; group 3; flags; groups 4, 5
]);

/// The two-byte opcodes, after `0F` (SDM table A-3).
pub(super) const TWO_BYTE: [Operands; 256] = grid([
    "mmmmx-----x-xm33", // 0: groups 6, 7, lar, lsl, syscall, clts, sysret, invd, wbinvd, ud2, prefetch; 3DNow!
    "mmmmmmmmmmmmmmmm", // 1: SSE moves, prefetch, hint nops, endbr64
    "rrrrxxxxmmmmmmmm", // 2: mov cr/dr; SSE
    "------x-*x*xxxxx", // 3: wrmsr, rdtsc, rdmsr, rdpmc, sysenter, sysexit, getsec; 0F38, 0F3A
    "mmmmmmmmmmmmmmmm", // 4: cmovcc
    "mmmmmmmmmmmmmmmm", // 5: SSE
    "mmmmmmmmmmmmmmmm", // 6: MMX/SSE
    "BBBBmmm-Qmxxmmmm", // 7: pshuf, groups 12-14, pcmpeq, emms, vmread/extrq, vmwrite, movd/q
    "jjjjjjjjjjjjjjjj", // 8: jcc rel32
    "mmmmmmmmmmmmmmmm", // 9: setcc
    "---mBmxx---mBmmm", // A: push/pop fs, cpuid, bt, shld, push/pop gs, rsm, bts, shrd, group 15, imul
    "mmmmmmmmmmBmmmmm", // B: cmpxchg, lss, btr, lfs, lgs, movzx, popcnt, ud1, group 8, btc, bsf, bsr, movsx
    "mmBmBBBm--------", // C: xadd, cmpps, movnti, pinsrw, pextrw, shufps, group 9, bswap
    "mmmmmmmmmmmmmmmm", // D: MMX/SSE
    "mmmmmmmmmmmmmmmm", // E: MMX/SSE
    "mmmmmmmmmmmmmmmm", // F: MMX/SSE, ud0
]);

/// The three-byte opcodes after `0F 38` without VEX (SDM table A-4): none
/// takes an immediate.
pub(super) const THREE_BYTE_38: [Operands; 256] = grid([
    "mmmmmmmmmmmmxxxx", // 0: pshufb .. pmulhrsw
    "mxxxmmxmxxxxmmmx", // 1: pblendvb, blendvps/pd, ptest, pabs
    "mmmmmmxxmmmmxxxx", // 2: pmovsx, pmuldq, pcmpeqq, movntdqa, packusdw
    "mmmmmmxmmmmmmmmm", // 3: pmovzx, pcmpgtq, pmin/pmax, pmulld
    "mmxxxxxxxxxxxxxx", // 4: pmulld, phminposuw
    "xxxxxxxxxxxxxxxx", // 5
    "xxxxxxxxxxxxxxxx", // 6
    "xxxxxxxxxxxxxxxx", // 7
    "mmmxxxxxxxxxxxxx", // 8: invept, invvpid, invpcid
    "xxxxxxxxxxxxxxxx", // 9
    "xxxxxxxxxxxxxxxx", // A
    "xxxxxxxxxxxxxxxx", // B
    "xxxxxxxxmmmmmmxm", // C: SHA, gf2p8mulb
    "xxxxxxxxmxxmmmmm", // D: Key Locker, AES
    "xxxxxxxxxxxxxxxx", // E
    "mmxxxmmxmmmmmxxx", // F: movbe/crc32, wruss, adcx/adox/wrss, movdir64b/enqcmd, movdiri, encodekey, aadd
]);

/// The three-byte opcodes after `0F 3A` without VEX (SDM table A-5): each
/// takes an 8-bit immediate.
pub(super) const THREE_BYTE_3A: [Operands; 256] = grid([
    "xxxxxxxxBBBBBBBB", // 0: round, blend, palignr
    "xxxxBBBBxxxxxxxx", // 1: pextrb/w/d/q, extractps
    "BBBxxxxxxxxxxxxx", // 2: pinsrb, insertps, pinsrd/q
    "xxxxxxxxxxxxxxxx", // 3
    "BBBxBxxxxxxxxxxx", // 4: dpps, dppd, mpsadbw, pclmulqdq
    "xxxxxxxxxxxxxxxx", // 5
    "BBBBxxxxxxxxxxxx", // 6: pcmpestrm/i, pcmpistrm/i
    "xxxxxxxxxxxxxxxx", // 7
    "xxxxxxxxxxxxxxxx", // 8
    "xxxxxxxxxxxxxxxx", // 9
    "xxxxxxxxxxxxxxxx", // A
    "xxxxxxxxxxxxxxxx", // B
    "xxxxxxxxxxxxBxBB", // C: sha1rnds4, gf2p8affine(inv)qb
    "xxxxxxxxxxxxxxxB", // D: aeskeygenassist
    "xxxxxxxxxxxxxxxx", // E
    "Bxxxxxxxxxxxxxxx", // F: hreset
]);

/// Opcodes of the VEX and EVEX `0F` map that take an 8-bit immediate
/// (`vpshufd`, the shift groups, `vcmpps`, `vpinsrw`, `vpextrw`,
/// `vshufps`); the `0F38` map takes none and the `0F3A` map one each.
pub(super) fn vex_map1_has_imm8(opcode: u8) -> bool {
    matches!(opcode, 0x70..=0x73 | 0xc2 | 0xc4..=0xc6)
}
