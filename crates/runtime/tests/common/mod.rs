//! Test fixture: objects for the runtime tests, written by `codegen`'s ELF
//! writer from programs hand-assembled here with a tiny raw assembler, so
//! that instruction indices (for the verifier test) are exact.

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the fixture"
)]

use codegen::insn::Insn;
use codegen::{ElfMap, ElfProgram, Function, Reloc};

pub const BPF_MAP_TYPE_HASH: u32 = 1;
pub const BPF_MAP_TYPE_ARRAY: u32 = 2;
pub const BPF_MAP_TYPE_PERCPU_HASH: u32 = 5;
pub const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
pub const BPF_MAP_TYPE_RINGBUF: u32 = 27;

pub struct MapDef {
    pub name: &'static str,
    pub map_type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
}

/// A tiny assembler: raw encodings, registers as numbers (r10 = frame pointer).
#[derive(Default)]
pub struct Asm {
    insns: Vec<Insn>,
    relocs: Vec<Reloc>,
}

impl Asm {
    fn raw(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) -> &mut Self {
        self.insns.push(Insn {
            code,
            dst,
            src,
            off,
            imm,
        });
        self
    }
    /// Instruction slots so far (the index of the next instruction).
    pub fn len(&self) -> usize {
        self.insns.len()
    }
    pub fn mov_imm(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.raw(0xb7, dst, 0, 0, imm)
    }
    pub fn mov_reg(&mut self, dst: u8, src: u8) -> &mut Self {
        self.raw(0xbf, dst, src, 0, 0)
    }
    pub fn add_imm(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.raw(0x07, dst, 0, 0, imm)
    }
    pub fn rsh_imm(&mut self, dst: u8, imm: i32) -> &mut Self {
        self.raw(0x77, dst, 0, 0, imm)
    }
    pub fn stx_w(&mut self, dst: u8, off: i16, src: u8) -> &mut Self {
        self.raw(0x63, dst, src, off, 0)
    }
    pub fn stx_dw(&mut self, dst: u8, off: i16, src: u8) -> &mut Self {
        self.raw(0x7b, dst, src, off, 0)
    }
    pub fn st_w(&mut self, dst: u8, off: i16, imm: i32) -> &mut Self {
        self.raw(0x62, dst, 0, off, imm)
    }
    pub fn ldx_dw(&mut self, dst: u8, src: u8, off: i16) -> &mut Self {
        self.raw(0x79, dst, src, off, 0)
    }
    /// `lock *(u64 *)(dst + off) += src`
    pub fn atomic_add_dw(&mut self, dst: u8, off: i16, src: u8) -> &mut Self {
        self.raw(0xdb, dst, src, off, 0)
    }
    /// `dst = map` (two slots), relocated against the map symbol.
    pub fn ld_map(&mut self, dst: u8, map: &'static str) -> &mut Self {
        self.relocs.push(Reloc {
            insn: self.insns.len(),
            symbol: map.to_string(),
        });
        self.raw(0x18, dst, 0, 0, 0).raw(0, 0, 0, 0, 0)
    }
    pub fn call(&mut self, helper: i32) -> &mut Self {
        self.raw(0x85, 0, 0, 0, helper)
    }
    /// `if dst == imm goto +off`
    pub fn jeq_imm(&mut self, dst: u8, imm: i32, off: i16) -> &mut Self {
        self.raw(0x15, dst, 0, off, imm)
    }
    pub fn exit(&mut self) -> &mut Self {
        self.raw(0x95, 0, 0, 0, 0)
    }
}

pub struct ProgDef {
    pub name: &'static str,
    pub section: &'static str,
    pub asm: Asm,
}

/// Writes a BPF ELF object with `codegen::write_object`.
pub fn write_object(maps: &[MapDef], progs: Vec<ProgDef>) -> Vec<u8> {
    let funcs: Vec<Function> = progs
        .iter()
        .map(|p| Function {
            spans: vec![Default::default(); p.asm.insns.len()],
            insns: p.asm.insns.clone(),
            relocs: p.asm.relocs.clone(),
            func_refs: Vec::new(),
            frame_size: 64,
        })
        .collect();
    let programs: Vec<ElfProgram<'_>> = progs
        .iter()
        .zip(&funcs)
        .map(|(p, func)| ElfProgram {
            name: p.name,
            section: p.section,
            func,
        })
        .collect();
    let maps: Vec<ElfMap> = maps
        .iter()
        .map(|m| ElfMap {
            name: m.name.to_string(),
            map_type: m.map_type,
            key_size: m.key_size,
            value_size: m.value_size,
            max_entries: m.max_entries,
            flags: 0,
        })
        .collect();
    codegen::write_object(&programs, &maps).expect("ELF")
}
