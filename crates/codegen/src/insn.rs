//! Raw eBPF instructions: the only module that knows opcode numbers.
//!
//! Layout of one 8-byte slot (little-endian): `code: u8`, `dst: u4 | src: u4`
//! (dst in the low nibble), `off: i16`, `imm: i32`. A 64-bit immediate load
//! (`ld_imm64`) takes two slots; the second has `code == 0` and carries the
//! high 32 bits in `imm`.

use std::fmt;

/// A physical BPF register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Reg {
    R0 = 0,
    R1,
    R2,
    R3,
    R4,
    R5,
    R6,
    R7,
    R8,
    R9,
    /// The read-only frame pointer.
    R10,
}

impl Reg {
    /// All registers by number.
    pub const ALL: [Reg; 11] = [
        Reg::R0,
        Reg::R1,
        Reg::R2,
        Reg::R3,
        Reg::R4,
        Reg::R5,
        Reg::R6,
        Reg::R7,
        Reg::R8,
        Reg::R9,
        Reg::R10,
    ];

    /// The register with number `n` (0..=10).
    pub fn from_u8(n: u8) -> Option<Reg> {
        Reg::ALL.get(n as usize).copied()
    }

    pub fn num(self) -> u8 {
        self as u8
    }

    /// The `k`-th helper argument register (`k` in 0..5 → R1..R5).
    pub fn arg(k: usize) -> Reg {
        Reg::ALL[k + 1]
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}", self.num())
    }
}

// Instruction classes.
pub const CLASS_LD: u8 = 0x00;
pub const CLASS_LDX: u8 = 0x01;
pub const CLASS_ST: u8 = 0x02;
pub const CLASS_STX: u8 = 0x03;
pub const CLASS_ALU: u8 = 0x04;
pub const CLASS_JMP: u8 = 0x05;
pub const CLASS_JMP32: u8 = 0x06;
pub const CLASS_ALU64: u8 = 0x07;

// Memory access sizes.
pub const SIZE_W: u8 = 0x00;
pub const SIZE_H: u8 = 0x08;
pub const SIZE_B: u8 = 0x10;
pub const SIZE_DW: u8 = 0x18;

// Memory modes.
pub const MODE_IMM: u8 = 0x00;
pub const MODE_MEM: u8 = 0x60;
pub const MODE_ATOMIC: u8 = 0xc0;

// Operand source.
pub const SRC_K: u8 = 0x00;
pub const SRC_X: u8 = 0x08;

// ALU operations.
pub const ALU_ADD: u8 = 0x00;
pub const ALU_SUB: u8 = 0x10;
pub const ALU_MUL: u8 = 0x20;
pub const ALU_DIV: u8 = 0x30;
pub const ALU_OR: u8 = 0x40;
pub const ALU_AND: u8 = 0x50;
pub const ALU_LSH: u8 = 0x60;
pub const ALU_RSH: u8 = 0x70;
pub const ALU_NEG: u8 = 0x80;
pub const ALU_MOD: u8 = 0x90;
pub const ALU_XOR: u8 = 0xa0;
pub const ALU_MOV: u8 = 0xb0;
pub const ALU_ARSH: u8 = 0xc0;

// Jump operations.
pub const JMP_JA: u8 = 0x00;
pub const JMP_JEQ: u8 = 0x10;
pub const JMP_JGT: u8 = 0x20;
pub const JMP_JGE: u8 = 0x30;
pub const JMP_JSET: u8 = 0x40;
pub const JMP_JNE: u8 = 0x50;
pub const JMP_JSGT: u8 = 0x60;
pub const JMP_JSGE: u8 = 0x70;
pub const JMP_CALL: u8 = 0x80;
pub const JMP_EXIT: u8 = 0x90;
pub const JMP_JLT: u8 = 0xa0;
pub const JMP_JLE: u8 = 0xb0;
pub const JMP_JSLT: u8 = 0xc0;
pub const JMP_JSLE: u8 = 0xd0;

/// `imm` of an atomic add without fetch (`lock *(u64 *)(dst + off) += src`).
pub const ATOMIC_ADD: i32 = 0x00;
/// `imm` of an atomic exchange (`BPF_XCHG`, always with `BPF_FETCH`):
/// `src = xchg(*(dst + off), src)`.
pub const ATOMIC_XCHG: i32 = 0xe1;
/// `imm` of an atomic add that gives back the old value (`BPF_ADD | BPF_FETCH`):
/// `src = fetch_add(*(dst + off), src)`.
pub const ATOMIC_FETCH_ADD: i32 = 0x01;

/// `src` of an `ld_imm64` whose immediate is a map file descriptor.
pub const PSEUDO_MAP_FD: u8 = 1;
/// `src` of a call of a kernel function by BTF id.
pub const PSEUDO_KFUNC_CALL: u8 = 2;
/// `src` of an `ld_imm64` whose immediate is the vmlinux BTF id of a kernel
/// variable (`BPF_PSEUDO_BTF_ID`: the verifier puts its address there).
pub const PSEUDO_BTF_ID: u8 = 3;
/// `src` of an `ld_imm64` whose immediate is a subprogram of the same
/// object (`BPF_PSEUDO_FUNC`: a callback's address; the loader resolves it).
pub const PSEUDO_FUNC: u8 = 4;

/// Opcode masks.
pub const CLASS_MASK: u8 = 0x07;
pub const OP_MASK: u8 = 0xf0;
pub const SIZE_MASK: u8 = 0x18;
pub const MODE_MASK: u8 = 0xe0;

/// The arithmetic operations as opcode bits plus the `off` marker of the
/// signed division forms (BPF ISA v4: `off == 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AluCode {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    SDiv,
    SMod,
    Or,
    And,
    Xor,
    Lsh,
    Rsh,
    Arsh,
    Mov,
}

impl AluCode {
    /// Opcode bits and `off` field.
    pub fn bits(self) -> (u8, i16) {
        match self {
            AluCode::Add => (ALU_ADD, 0),
            AluCode::Sub => (ALU_SUB, 0),
            AluCode::Mul => (ALU_MUL, 0),
            AluCode::Div => (ALU_DIV, 0),
            AluCode::Mod => (ALU_MOD, 0),
            AluCode::SDiv => (ALU_DIV, 1),
            AluCode::SMod => (ALU_MOD, 1),
            AluCode::Or => (ALU_OR, 0),
            AluCode::And => (ALU_AND, 0),
            AluCode::Xor => (ALU_XOR, 0),
            AluCode::Lsh => (ALU_LSH, 0),
            AluCode::Rsh => (ALU_RSH, 0),
            AluCode::Arsh => (ALU_ARSH, 0),
            AluCode::Mov => (ALU_MOV, 0),
        }
    }
}

/// Memory access width as opcode size bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    B,
    H,
    W,
    DW,
}

impl Size {
    pub fn bits(self) -> u8 {
        match self {
            Size::B => SIZE_B,
            Size::H => SIZE_H,
            Size::W => SIZE_W,
            Size::DW => SIZE_DW,
        }
    }

    pub fn from_bits(code: u8) -> Size {
        match code & SIZE_MASK {
            SIZE_B => Size::B,
            SIZE_H => Size::H,
            SIZE_W => Size::W,
            _ => Size::DW,
        }
    }

    pub fn bytes(self) -> u32 {
        match self {
            Size::B => 1,
            Size::H => 2,
            Size::W => 4,
            Size::DW => 8,
        }
    }
}

/// Conditional jump operations (64-bit compare).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JmpCode {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    SGt,
    SGe,
    SLt,
    SLe,
    Set,
}

impl JmpCode {
    pub fn bits(self) -> u8 {
        match self {
            JmpCode::Eq => JMP_JEQ,
            JmpCode::Ne => JMP_JNE,
            JmpCode::Gt => JMP_JGT,
            JmpCode::Ge => JMP_JGE,
            JmpCode::Lt => JMP_JLT,
            JmpCode::Le => JMP_JLE,
            JmpCode::SGt => JMP_JSGT,
            JmpCode::SGe => JMP_JSGE,
            JmpCode::SLt => JMP_JSLT,
            JmpCode::SLe => JMP_JSLE,
            JmpCode::Set => JMP_JSET,
        }
    }
}

/// One 8-byte instruction slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    /// Destination register number (low nibble of byte 1).
    pub dst: u8,
    /// Source register number or pseudo marker (high nibble of byte 1).
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    pub const fn raw(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            dst,
            src,
            off,
            imm,
        }
    }

    /// The 8 bytes of this slot.
    pub fn encode(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = (self.dst & 0x0f) | ((self.src & 0x0f) << 4);
        b[2..4].copy_from_slice(&self.off.to_le_bytes());
        b[4..8].copy_from_slice(&self.imm.to_le_bytes());
        b
    }

    /// Parses one slot.
    pub fn decode(b: [u8; 8]) -> Insn {
        Insn {
            code: b[0],
            dst: b[1] & 0x0f,
            src: b[1] >> 4,
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    pub fn class(&self) -> u8 {
        self.code & CLASS_MASK
    }

    /// Whether this slot starts a two-slot `ld_imm64`.
    pub fn is_ld_imm64(&self) -> bool {
        self.code == CLASS_LD | MODE_IMM | SIZE_DW
    }

    /// Whether this is a jump with a pc-relative `off` (not call/exit).
    pub fn is_jump(&self) -> bool {
        let class = self.class();
        (class == CLASS_JMP || class == CLASS_JMP32)
            && self.code & OP_MASK != JMP_CALL
            && self.code & OP_MASK != JMP_EXIT
    }

    /// `dst (op)= src` on 64 bits.
    pub fn alu64_reg(op: AluCode, dst: Reg, src: Reg) -> Insn {
        let (bits, off) = op.bits();
        Insn::raw(CLASS_ALU64 | bits | SRC_X, dst.num(), src.num(), off, 0)
    }

    /// `dst (op)= imm` on 64 bits (imm sign-extended).
    pub fn alu64_imm(op: AluCode, dst: Reg, imm: i32) -> Insn {
        let (bits, off) = op.bits();
        Insn::raw(CLASS_ALU64 | bits | SRC_K, dst.num(), 0, off, imm)
    }

    /// `w_dst (op)= w_src` on 32 bits; the result is zero-extended.
    pub fn alu32_reg(op: AluCode, dst: Reg, src: Reg) -> Insn {
        let (bits, off) = op.bits();
        Insn::raw(CLASS_ALU | bits | SRC_X, dst.num(), src.num(), off, 0)
    }

    /// `w_dst (op)= imm` on 32 bits; the result is zero-extended.
    pub fn alu32_imm(op: AluCode, dst: Reg, imm: i32) -> Insn {
        let (bits, off) = op.bits();
        Insn::raw(CLASS_ALU | bits | SRC_K, dst.num(), 0, off, imm)
    }

    pub fn mov64_reg(dst: Reg, src: Reg) -> Insn {
        Insn::alu64_reg(AluCode::Mov, dst, src)
    }

    pub fn mov64_imm(dst: Reg, imm: i32) -> Insn {
        Insn::alu64_imm(AluCode::Mov, dst, imm)
    }

    pub fn mov32_reg(dst: Reg, src: Reg) -> Insn {
        Insn::alu32_reg(AluCode::Mov, dst, src)
    }

    pub fn mov32_imm(dst: Reg, imm: i32) -> Insn {
        Insn::alu32_imm(AluCode::Mov, dst, imm)
    }

    /// `dst = -dst` on 64 bits.
    pub fn neg64(dst: Reg) -> Insn {
        Insn::raw(CLASS_ALU64 | ALU_NEG, dst.num(), 0, 0, 0)
    }

    /// `dst = imm64`: two slots.
    pub fn ld_imm64(dst: Reg, value: i64) -> [Insn; 2] {
        Insn::ld_imm64_src(dst, 0, value)
    }

    /// `dst = map[fd]`: two slots, the map fd (0 until relocated) in `imm`.
    pub fn ld_map_fd(dst: Reg, fd: i32) -> [Insn; 2] {
        Insn::ld_imm64_src(dst, PSEUDO_MAP_FD, fd as u32 as i64)
    }

    /// `dst = &subprogram`: two slots, the instruction offset from the
    /// slot after this one to the subprogram in `imm` (0 until relocated).
    pub fn ld_func_addr(dst: Reg, rel: i32) -> [Insn; 2] {
        Insn::ld_imm64_src(dst, PSEUDO_FUNC, rel as u32 as i64)
    }

    /// `dst = &kernel variable`: two slots, its vmlinux BTF id in `imm`
    /// (the second slot's `imm`, a module BTF's fd, stays 0).
    pub fn ld_btf_id(dst: Reg, btf_id: u32) -> [Insn; 2] {
        Insn::ld_imm64_src(dst, PSEUDO_BTF_ID, i64::from(btf_id))
    }

    fn ld_imm64_src(dst: Reg, src: u8, value: i64) -> [Insn; 2] {
        [
            Insn::raw(
                CLASS_LD | MODE_IMM | SIZE_DW,
                dst.num(),
                src,
                0,
                value as u32 as i32,
            ),
            Insn::raw(0, 0, 0, 0, ((value as u64) >> 32) as u32 as i32),
        ]
    }

    /// `dst = *(size *)(src + off)`, zero-extended.
    pub fn ldx(size: Size, dst: Reg, src: Reg, off: i16) -> Insn {
        Insn::raw(
            CLASS_LDX | MODE_MEM | size.bits(),
            dst.num(),
            src.num(),
            off,
            0,
        )
    }

    /// `*(size *)(dst + off) = src`.
    pub fn stx(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::raw(
            CLASS_STX | MODE_MEM | size.bits(),
            dst.num(),
            src.num(),
            off,
            0,
        )
    }

    /// `*(size *)(dst + off) = imm`.
    pub fn st(size: Size, dst: Reg, off: i16, imm: i32) -> Insn {
        Insn::raw(CLASS_ST | MODE_MEM | size.bits(), dst.num(), 0, off, imm)
    }

    /// `lock *(size *)(dst + off) += src` (size W or DW).
    pub fn atomic_add(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::raw(
            CLASS_STX | MODE_ATOMIC | size.bits(),
            dst.num(),
            src.num(),
            off,
            ATOMIC_ADD,
        )
    }

    /// `src = xchg(*(size *)(dst + off), src)` (size W or DW): the old
    /// value comes back in `src`, which makes it the one atomic that needs
    /// no fixed register (cmpxchg compares with R0).
    pub fn atomic_xchg(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::raw(
            CLASS_STX | MODE_ATOMIC | size.bits(),
            dst.num(),
            src.num(),
            off,
            ATOMIC_XCHG,
        )
    }

    /// `src = fetch_add(*(size *)(dst + off), src)` (size W or DW): adds
    /// and gives back the value before the add, like [`Insn::atomic_xchg`].
    pub fn atomic_fetch_add(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::raw(
            CLASS_STX | MODE_ATOMIC | size.bits(),
            dst.num(),
            src.num(),
            off,
            ATOMIC_FETCH_ADD,
        )
    }

    /// `goto +off`.
    pub fn ja(off: i16) -> Insn {
        Insn::raw(CLASS_JMP | JMP_JA, 0, 0, off, 0)
    }

    /// `if dst (op) src goto +off` (64-bit compare).
    pub fn jmp_reg(op: JmpCode, dst: Reg, src: Reg, off: i16) -> Insn {
        Insn::raw(CLASS_JMP | op.bits() | SRC_X, dst.num(), src.num(), off, 0)
    }

    /// `if dst (op) imm goto +off` (64-bit compare, imm sign-extended).
    pub fn jmp_imm(op: JmpCode, dst: Reg, imm: i32, off: i16) -> Insn {
        Insn::raw(CLASS_JMP | op.bits() | SRC_K, dst.num(), 0, off, imm)
    }

    /// `call helper#id`.
    pub fn call(helper: u32) -> Insn {
        Insn::raw(CLASS_JMP | JMP_CALL, 0, 0, 0, helper as i32)
    }

    /// A call of a vmlinux kfunc by its BTF id (`BPF_PSEUDO_KFUNC_CALL`).
    pub fn call_kfunc(btf_id: u32) -> Insn {
        Insn::raw(CLASS_JMP | JMP_CALL, 0, PSEUDO_KFUNC_CALL, 0, btf_id as i32)
    }

    pub fn exit() -> Insn {
        Insn::raw(CLASS_JMP | JMP_EXIT, 0, 0, 0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(i: Insn) -> [u8; 8] {
        i.encode()
    }

    /// Expected bytes as printed by `llvm-objdump -d` for clang-built objects.
    #[test]
    fn encoding_table() {
        let table: &[(Insn, [u8; 8])] = &[
            // r6 = r1
            (
                Insn::mov64_reg(Reg::R6, Reg::R1),
                [0xbf, 0x16, 0, 0, 0, 0, 0, 0],
            ),
            // r0 = 0
            (Insn::mov64_imm(Reg::R0, 0), [0xb7, 0, 0, 0, 0, 0, 0, 0]),
            // w1 = -1
            (
                Insn::mov32_imm(Reg::R1, -1),
                [0xb4, 0x01, 0, 0, 0xff, 0xff, 0xff, 0xff],
            ),
            // r2 += -8
            (
                Insn::alu64_imm(AluCode::Add, Reg::R2, -8),
                [0x07, 0x02, 0, 0, 0xf8, 0xff, 0xff, 0xff],
            ),
            // r1 -= r2
            (
                Insn::alu64_reg(AluCode::Sub, Reg::R1, Reg::R2),
                [0x1f, 0x21, 0, 0, 0, 0, 0, 0],
            ),
            // r1 s/= r2 (v4: off = 1)
            (
                Insn::alu64_reg(AluCode::SDiv, Reg::R1, Reg::R2),
                [0x3f, 0x21, 1, 0, 0, 0, 0, 0],
            ),
            // r3 >>= 32
            (
                Insn::alu64_imm(AluCode::Rsh, Reg::R3, 32),
                [0x77, 0x03, 0, 0, 0x20, 0, 0, 0],
            ),
            // r1 = -r1
            (Insn::neg64(Reg::R1), [0x87, 0x01, 0, 0, 0, 0, 0, 0]),
            // r1 = *(u32 *)(r6 + 8)
            (
                Insn::ldx(Size::W, Reg::R1, Reg::R6, 8),
                [0x61, 0x61, 0x08, 0, 0, 0, 0, 0],
            ),
            // r0 = *(u64 *)(r10 - 16)
            (
                Insn::ldx(Size::DW, Reg::R0, Reg::R10, -16),
                [0x79, 0xa0, 0xf0, 0xff, 0, 0, 0, 0],
            ),
            // *(u64 *)(r10 - 8) = r1
            (
                Insn::stx(Size::DW, Reg::R10, -8, Reg::R1),
                [0x7b, 0x1a, 0xf8, 0xff, 0, 0, 0, 0],
            ),
            // *(u8 *)(r10 - 1) = r2
            (
                Insn::stx(Size::B, Reg::R10, -1, Reg::R2),
                [0x73, 0x2a, 0xff, 0xff, 0, 0, 0, 0],
            ),
            // *(u32 *)(r10 - 4) = 0
            (
                Insn::st(Size::W, Reg::R10, -4, 0),
                [0x62, 0x0a, 0xfc, 0xff, 0, 0, 0, 0],
            ),
            // lock *(u64 *)(r0 + 0) += r1
            (
                Insn::atomic_add(Size::DW, Reg::R0, 0, Reg::R1),
                [0xdb, 0x10, 0, 0, 0, 0, 0, 0],
            ),
            // lock *(u32 *)(r0 + 0) += r1
            (
                Insn::atomic_add(Size::W, Reg::R0, 0, Reg::R1),
                [0xc3, 0x10, 0, 0, 0, 0, 0, 0],
            ),
            // r1 = xchg(*(u64 *)(r0 + 8), r1)
            (
                Insn::atomic_xchg(Size::DW, Reg::R0, 8, Reg::R1),
                [0xdb, 0x10, 0x08, 0, 0xe1, 0, 0, 0],
            ),
            // r2 = fetch_add(*(u64 *)(r1 + 16), r2)
            (
                Insn::atomic_fetch_add(Size::DW, Reg::R1, 16, Reg::R2),
                [0xdb, 0x21, 0x10, 0, 0x01, 0, 0, 0],
            ),
            // if r0 == 0 goto +3
            (
                Insn::jmp_imm(JmpCode::Eq, Reg::R0, 0, 3),
                [0x15, 0x00, 0x03, 0, 0, 0, 0, 0],
            ),
            // if r1 s> r2 goto -2
            (
                Insn::jmp_reg(JmpCode::SGt, Reg::R1, Reg::R2, -2),
                [0x6d, 0x21, 0xfe, 0xff, 0, 0, 0, 0],
            ),
            // goto +1
            (Insn::ja(1), [0x05, 0, 0x01, 0, 0, 0, 0, 0]),
            // call 14
            (Insn::call(14), [0x85, 0, 0, 0, 0x0e, 0, 0, 0]),
            // exit
            (Insn::exit(), [0x95, 0, 0, 0, 0, 0, 0, 0]),
        ];
        for (i, (insn, want)) in table.iter().enumerate() {
            assert_eq!(bytes(*insn), *want, "row {i}: {insn:?}");
            assert_eq!(Insn::decode(*want), *insn, "row {i} decode");
        }
    }

    #[test]
    fn ld_imm64_takes_two_slots() {
        let [a, b] = Insn::ld_imm64(Reg::R1, 0x1122_3344_5566_7788);
        assert_eq!(a.encode(), [0x18, 0x01, 0, 0, 0x88, 0x77, 0x66, 0x55]);
        assert_eq!(b.encode(), [0, 0, 0, 0, 0x44, 0x33, 0x22, 0x11]);
        let [a, b] = Insn::ld_map_fd(Reg::R1, 0);
        assert_eq!(a.encode(), [0x18, 0x11, 0, 0, 0, 0, 0, 0]);
        assert_eq!(b.encode(), [0; 8]);
        assert!(a.is_ld_imm64());
    }
}
