//! codegen: the typed BPF assembler ([`asm`]) over raw instructions
//! ([`insn`]), its disassembler ([`disasm`]), the ELF object writer
//! ([`elf`]) and the joining of a program with its subprograms ([`link`]).

#![forbid(unsafe_code)]

pub mod asm;
pub mod disasm;
pub mod elf;
pub mod insn;
pub mod link;
pub mod lower;

pub use asm::{AluOp, Asm, AsmError, Cond, Function, Helper, Label, Reloc, Slot, Src, VReg, Width};
pub use disasm::disasm;
pub use elf::{
    ElfError, ElfMap, ElfProgram, ElfSubprogram, MapType, write_object, write_object_licensed,
};
pub use lower::{Compiled, Options, compile, compile_with};
