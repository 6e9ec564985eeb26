//! What uprobes and USDT need to know about a user-space ELF file, read
//! from its bytes: function symbols, the translation of virtual addresses
//! to file offsets (the kernel attaches uprobes at file offsets), the
//! `.note.stapsdt` probes with their argument specs, plus the two system
//! tables used to find a library by short name (`/etc/ld.so.cache` and
//! `/proc/PID/maps`), and x86-64 instruction lengths, so a uprobe goes
//! only where an instruction begins. Nothing here opens a file: callers
//! pass bytes/text.
//!
//! Functions' parameters and C types, and the source line table, come
//! from DWARF ([`dwarf`]).
//!
//! Only 64-bit little-endian ELF and x86_64 argument specs are understood.

#![forbid(unsafe_code)]

mod binary;
pub mod cfi;
pub mod dwarf;
mod ldcache;
mod procmaps;
pub mod testing;
mod usdt;
mod usdt_args;
mod x86;

pub use binary::{Binary, ElfError, Segment, Symbol};
pub use ldcache::parse_ld_so_cache;
pub use procmaps::{Backing, Mapping, ProcessMaps, mapped_files};
pub use usdt::UsdtNote;
pub use usdt_args::{ArgLocation, ArgSpecError, UsdtArg, parse_arg_specs};
pub use x86::{
    DecodeError, Encoding, Instruction, Placement, decode, is_vector_instruction, place,
};
