//! The BPF ELF object writer: program sections, `.maps` with a generated
//! `.BTF`, and `license`.
//!
//! Layout (what clang emits and libbpf ≥ 1.0 and bpftool read):
//! - one section per distinct program section name (programs sharing a name
//!   are concatenated), a sized global `STT_FUNC` symbol per program;
//! - `.maps`: one global `STT_OBJECT` per map whose value is its offset; its
//!   bytes are zero and its shape is described by `.BTF` as a struct of
//!   `int (*member)[N]` pointers (libbpf's `__uint(member, N)`);
//! - map loads are `ld_imm64` with a REL `R_BPF_64_64` against the map symbol;
//! - `license` = `"GPL\0"` (or the config's `license`);
//! - `.BTF` also holds a `FUNC` per program and `.BTF.ext` its `func_info`,
//!   so the kernel keeps each program's full name (the kernel's own name is
//!   cut at 15 bytes; `bpftool prog show` prints the full one from BTF);
//! - subprograms (callbacks) go in `.text`, where libbpf looks for them,
//!   each a global `STT_FUNC` with a static `FUNC` in `.BTF` and its
//!   `func_info` (the verifier wants one for every function once a program
//!   has more than one); an `ld_imm64` of a subprogram's address
//!   (`BPF_PSEUDO_FUNC`) is a REL `R_BPF_64_64` against its symbol, which
//!   libbpf resolves when it appends the subprogram to each program using it.

use std::fmt;

use object::write::{Object, Relocation, SectionId, Symbol, SymbolId, SymbolSection};
use object::{
    Architecture, BinaryFormat, Endianness, RelocationFlags, SectionKind, SymbolFlags, SymbolKind,
    SymbolScope,
};

use crate::asm::Function;

/// `BPF_MAP_TYPE_*` values used by weft.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum MapType {
    Hash = 1,
    Array = 2,
    PerfEventArray = 4,
    PerCpuHash = 5,
    PerCpuArray = 6,
    StackTrace = 7,
    LruHash = 9,
    LruPerCpuHash = 10,
    RingBuf = 27,
}

impl MapType {
    pub fn id(self) -> u32 {
        self as u32
    }
}

/// One program to place in the object.
#[derive(Clone, Copy, Debug)]
pub struct ElfProgram<'a> {
    /// The function symbol (libbpf's program name).
    pub name: &'a str,
    /// The section name, which gives the program type to libbpf
    /// (`tracepoint/syscalls/sys_enter_getppid`, `raw_tp/weft_begin`, `perf_event`).
    pub section: &'a str,
    pub func: &'a Function,
}

/// One subprogram, placed in `.text`: a function the programs reach through
/// [`Function::func_refs`] (a callback a helper calls).
#[derive(Clone, Copy, Debug)]
pub struct ElfSubprogram<'a> {
    /// The function symbol, which references name.
    pub name: &'a str,
    /// How many arguments it takes (R1..R5; its BTF prototype says so).
    pub params: u32,
    pub func: &'a Function,
}

/// One map definition in `.maps`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfMap {
    pub name: String,
    /// `BPF_MAP_TYPE_*` (see [`MapType`]).
    pub map_type: u32,
    /// 0 for ring buffers.
    pub key_size: u32,
    /// 0 for ring buffers.
    pub value_size: u32,
    pub max_entries: u32,
    /// `BPF_F_*` map flags.
    pub flags: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// A program references a map that is not in the map list.
    UnknownMap { program: String, symbol: String },
    /// A program references a subprogram that is not in the list.
    UnknownSubprogram { program: String, symbol: String },
    /// Two maps or programs share a symbol name.
    DuplicateSymbol(String),
    /// A symbol or section name that ELF cannot hold (empty, or with a NUL).
    BadName(String),
    /// The `object` crate failed to write.
    Write(String),
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElfError::UnknownMap { program, symbol } => {
                write!(f, "program {program} references unknown map {symbol}")
            }
            ElfError::UnknownSubprogram { program, symbol } => {
                write!(
                    f,
                    "program {program} references unknown subprogram {symbol}"
                )
            }
            ElfError::DuplicateSymbol(s) => write!(f, "duplicate symbol {s}"),
            ElfError::BadName(s) => write!(f, "the name {s:?} cannot be an ELF symbol or section"),
            ElfError::Write(e) => write!(f, "writing the ELF object: {e}"),
        }
    }
}

impl std::error::Error for ElfError {}

/// Writes a relocatable BPF ELF object under the GPL.
pub fn write_object(programs: &[ElfProgram<'_>], maps: &[ElfMap]) -> Result<Vec<u8>, ElfError> {
    write_object_licensed(programs, &[], maps, "GPL")
}

/// Writes a relocatable BPF ELF object whose `license` section says
/// `license` (bpftrace's `license` config key; the kernel lets only
/// GPL-compatible programs call GPL-only helpers).
pub fn write_object_licensed(
    programs: &[ElfProgram<'_>],
    subprograms: &[ElfSubprogram<'_>],
    maps: &[ElfMap],
    license: &str,
) -> Result<Vec<u8>, ElfError> {
    let mut names = foldhash::HashSet::default();
    for n in programs
        .iter()
        .map(|p| p.name)
        .chain(subprograms.iter().map(|s| s.name))
        .chain(maps.iter().map(|m| m.name.as_str()))
    {
        if !names.insert(n) {
            return Err(ElfError::DuplicateSymbol(n.to_string()));
        }
    }
    // ELF names are NUL-terminated strings.
    if let Some(n) = programs
        .iter()
        .flat_map(|p| [p.name, p.section])
        .chain(subprograms.iter().map(|s| s.name))
        .chain(maps.iter().map(|m| m.name.as_str()))
        .find(|n| n.is_empty() || n.contains('\0'))
    {
        return Err(ElfError::BadName(n.to_string()));
    }
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::Bpf, Endianness::Little);

    // Maps first so that relocations can name their symbols.
    let mut map_syms: foldhash::HashMap<String, SymbolId> = foldhash::HashMap::default();
    let map_defs: Vec<MapDef> = maps.iter().map(MapDef::of).collect();
    if !maps.is_empty() {
        let total: usize = map_defs.iter().map(|d| d.size()).sum();
        let sec = obj.add_section(Vec::new(), b".maps".to_vec(), SectionKind::Data);
        obj.section_mut(sec).set_data(vec![0u8; total], 8);
        let mut off = 0u64;
        for (m, d) in maps.iter().zip(&map_defs) {
            let id = obj.add_symbol(Symbol {
                name: m.name.as_bytes().to_vec(),
                value: off,
                size: d.size() as u64,
                kind: SymbolKind::Data,
                scope: SymbolScope::Dynamic,
                weak: false,
                section: SymbolSection::Section(sec),
                flags: SymbolFlags::None,
            });
            map_syms.insert(m.name.clone(), id);
            off += d.size() as u64;
        }
    }

    // Programs grouped by section name, in first-appearance order, then the
    // subprograms in `.text`; each function's (section, byte offset) for
    // its func_info.
    let functions: Vec<(&str, &str, &Function)> = programs
        .iter()
        .map(|p| (p.name, p.section, p.func))
        .chain(subprograms.iter().map(|s| (s.name, ".text", s.func)))
        .collect();
    let mut placed: Vec<(usize, u64)> = Vec::new();
    let mut sections: Vec<(&str, SectionId, u64)> = Vec::new();
    let mut section_index: foldhash::HashMap<&str, usize> = foldhash::HashMap::default();
    let mut func_syms: foldhash::HashMap<&str, SymbolId> = foldhash::HashMap::default();
    for &(name, section, func) in &functions {
        let idx = match section_index.get(section) {
            Some(&i) => i,
            None => {
                let id =
                    obj.add_section(Vec::new(), section.as_bytes().to_vec(), SectionKind::Text);
                sections.push((section, id, 0));
                section_index.insert(section, sections.len() - 1);
                sections.len() - 1
            }
        };
        let (_, sec, _) = sections[idx];
        let bytes = func.bytes();
        let base = obj.append_section_data(sec, &bytes, 8);
        placed.push((idx, base));
        sections[idx].2 = base + bytes.len() as u64;
        let sym = obj.add_symbol(Symbol {
            name: name.as_bytes().to_vec(),
            value: base,
            size: bytes.len() as u64,
            kind: SymbolKind::Text,
            scope: SymbolScope::Dynamic,
            weak: false,
            section: SymbolSection::Section(sec),
            flags: SymbolFlags::None,
        });
        func_syms.insert(name, sym);
    }
    for (&(name, _, func), &(idx, base)) in functions.iter().zip(&placed) {
        let sec = sections[idx].1;
        let map_refs = func.relocs.iter().map(|r| {
            map_syms
                .get(&r.symbol)
                .copied()
                .ok_or_else(|| ElfError::UnknownMap {
                    program: name.to_string(),
                    symbol: r.symbol.clone(),
                })
        });
        let func_refs = func.func_refs.iter().map(|r| {
            func_syms
                .get(r.symbol.as_str())
                .copied()
                .ok_or_else(|| ElfError::UnknownSubprogram {
                    program: name.to_string(),
                    symbol: r.symbol.clone(),
                })
        });
        let at = func.relocs.iter().chain(&func.func_refs).map(|r| r.insn);
        for (insn, sym) in at.zip(map_refs.chain(func_refs)) {
            obj.add_relocation(
                sec,
                Relocation {
                    offset: base + insn as u64 * 8,
                    symbol: sym?,
                    addend: 0,
                    flags: RelocationFlags::Elf {
                        r_type: object::elf::R_BPF_64_64,
                    },
                },
            )
            .map_err(|e| ElfError::Write(e.to_string()))?;
        }
    }

    let lic = obj.add_section(Vec::new(), b"license".to_vec(), SectionKind::Data);
    let mut license = license.as_bytes().to_vec();
    license.push(0);
    let license_size = license.len() as u64;
    obj.section_mut(lic).set_data(license, 1);
    obj.add_symbol(Symbol {
        name: b"_license".to_vec(),
        value: 0,
        size: license_size,
        kind: SymbolKind::Data,
        scope: SymbolScope::Dynamic,
        weak: false,
        section: SymbolSection::Section(lic),
        flags: SymbolFlags::None,
    });

    if !maps.is_empty() || !programs.is_empty() {
        let mut b = Btf::new();
        if !maps.is_empty() {
            btf_for_maps(&mut b, maps, &map_defs);
        }
        let funcs = btf_funcs(&mut b, programs, subprograms);
        // func_info by section: the section's name in `.BTF`'s strings, then
        // (byte offset in the section, FUNC type) of each of its programs.
        let mut by_section: Vec<(u32, Vec<(u32, u32)>)> = sections
            .iter()
            .map(|(name, _, _)| (b.str(name), Vec::new()))
            .collect();
        for (&(idx, base), func) in placed.iter().zip(funcs) {
            by_section[idx].1.push((base as u32, func));
        }
        let sec = obj.add_section(Vec::new(), b".BTF".to_vec(), SectionKind::Other);
        obj.section_mut(sec).set_data(b.finish(), 4);
        if !programs.is_empty() {
            let sec = obj.add_section(Vec::new(), b".BTF.ext".to_vec(), SectionKind::Other);
            obj.section_mut(sec)
                .set_data(btf_ext_func_info(&by_section), 4);
        }
    }

    obj.write().map_err(|e| ElfError::Write(e.to_string()))
}

/// The `__uint` members of one map definition.
struct MapDef {
    members: Vec<(&'static str, u32)>,
}

impl MapDef {
    fn of(m: &ElfMap) -> MapDef {
        let mut members = vec![("type", m.map_type)];
        if m.key_size != 0 {
            members.push(("key_size", m.key_size));
        }
        if m.value_size != 0 {
            members.push(("value_size", m.value_size));
        }
        members.push(("max_entries", m.max_entries));
        if m.flags != 0 {
            members.push(("map_flags", m.flags));
        }
        MapDef { members }
    }

    /// Bytes in `.maps` (one pointer per member).
    fn size(&self) -> usize {
        self.members.len() * 8
    }
}

const BTF_MAGIC: u16 = 0xeb9f;
const BTF_KIND_INT: u32 = 1;
const BTF_KIND_PTR: u32 = 2;
const BTF_KIND_ARRAY: u32 = 3;
const BTF_KIND_STRUCT: u32 = 4;
const BTF_KIND_FUNC: u32 = 12;
const BTF_KIND_FUNC_PROTO: u32 = 13;
const BTF_KIND_VAR: u32 = 14;
const BTF_KIND_DATASEC: u32 = 15;
const BTF_INT_SIGNED: u32 = 1 << 24;
const BTF_VAR_GLOBAL_ALLOCATED: u32 = 1;

/// A minimal BTF writer.
struct Btf {
    types: Vec<u8>,
    strings: Vec<u8>,
    next_id: u32,
}

impl Btf {
    fn new() -> Btf {
        Btf {
            types: Vec::new(),
            strings: vec![0],
            next_id: 1,
        }
    }

    fn str(&mut self, s: &str) -> u32 {
        let off = self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        off
    }

    fn u32(&mut self, v: u32) {
        self.types.extend_from_slice(&v.to_le_bytes());
    }

    /// Writes a `btf_type` header and returns the new type id.
    fn ty(&mut self, name_off: u32, kind: u32, vlen: u32, size_or_type: u32) -> u32 {
        self.u32(name_off);
        self.u32((kind << 24) | (vlen & 0xffff));
        self.u32(size_or_type);
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn finish(self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&BTF_MAGIC.to_le_bytes());
        out.push(1); // version
        out.push(0); // flags
        out.extend_from_slice(&24u32.to_le_bytes()); // hdr_len
        out.extend_from_slice(&0u32.to_le_bytes()); // type_off
        out.extend_from_slice(&(self.types.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.types.len() as u32).to_le_bytes()); // str_off
        out.extend_from_slice(&(self.strings.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.types);
        out.extend_from_slice(&self.strings);
        out
    }
}

/// A `FUNC` (static, `int NAME(void *ctx)`) for each program, then one
/// (static, `long NAME(void *arg1, ...)`) for each subprogram, in order:
/// their type ids.
fn btf_funcs(
    b: &mut Btf,
    programs: &[ElfProgram<'_>],
    subprograms: &[ElfSubprogram<'_>],
) -> Vec<u32> {
    if programs.is_empty() {
        return Vec::new();
    }
    let int_name = b.str("int");
    let int = b.ty(int_name, BTF_KIND_INT, 0, 4);
    b.u32(BTF_INT_SIGNED | 32);
    let void_ptr = b.ty(0, BTF_KIND_PTR, 0, 0);
    let ctx = b.str("ctx");
    let proto = b.ty(0, BTF_KIND_FUNC_PROTO, 1, int);
    b.u32(ctx);
    b.u32(void_ptr);
    let mut ids: Vec<u32> = programs
        .iter()
        .map(|p| {
            let name = b.str(p.name);
            b.ty(name, BTF_KIND_FUNC, 0, proto)
        })
        .collect();
    if subprograms.is_empty() {
        return ids;
    }
    let long_name = b.str("long");
    let long = b.ty(long_name, BTF_KIND_INT, 0, 8);
    b.u32(BTF_INT_SIGNED | 64);
    let mut protos: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    for s in subprograms {
        let params = s.params.clamp(1, 5);
        let proto = match protos.get(&params) {
            Some(&p) => p,
            None => {
                let names: Vec<u32> = (1..=params).map(|k| b.str(&format!("arg{k}"))).collect();
                let p = b.ty(0, BTF_KIND_FUNC_PROTO, params, long);
                for n in names {
                    b.u32(n);
                    b.u32(void_ptr);
                }
                protos.insert(params, p);
                p
            }
        };
        let name = b.str(s.name);
        ids.push(b.ty(name, BTF_KIND_FUNC, 0, proto));
    }
    ids
}

/// `.BTF.ext` with only `func_info` (no line info, no CO-RE relocations).
fn btf_ext_func_info(sections: &[(u32, Vec<(u32, u32)>)]) -> Vec<u8> {
    let mut info = Vec::new();
    info.extend_from_slice(&8u32.to_le_bytes()); // record size
    for (name, records) in sections {
        info.extend_from_slice(&name.to_le_bytes());
        info.extend_from_slice(&(records.len() as u32).to_le_bytes());
        for (offset, type_id) in records {
            info.extend_from_slice(&offset.to_le_bytes());
            info.extend_from_slice(&type_id.to_le_bytes());
        }
    }
    let mut out = Vec::new();
    out.extend_from_slice(&BTF_MAGIC.to_le_bytes());
    out.push(1); // version
    out.push(0); // flags
    out.extend_from_slice(&24u32.to_le_bytes()); // hdr_len
    out.extend_from_slice(&0u32.to_le_bytes()); // func_info_off
    out.extend_from_slice(&(info.len() as u32).to_le_bytes());
    out.extend_from_slice(&(info.len() as u32).to_le_bytes()); // line_info_off
    out.extend_from_slice(&0u32.to_le_bytes()); // line_info_len
    out.extend_from_slice(&info);
    out
}

/// `.BTF` describing each map in `.maps` as libbpf expects.
fn btf_for_maps(b: &mut Btf, maps: &[ElfMap], defs: &[MapDef]) {
    let int_name = b.str("int");
    let int = b.ty(int_name, BTF_KIND_INT, 0, 4);
    b.u32(BTF_INT_SIGNED | 32);
    // `int (*)[n]` for every distinct n.
    let mut ptrs: Vec<(u32, u32)> = Vec::new();
    for d in defs {
        for &(_, n) in &d.members {
            if ptrs.iter().all(|p| p.0 != n) {
                let arr = b.ty(0, BTF_KIND_ARRAY, 0, 0);
                b.u32(int);
                b.u32(int);
                b.u32(n);
                let ptr = b.ty(0, BTF_KIND_PTR, 0, arr);
                ptrs.push((n, ptr));
            }
        }
    }
    let mut vars = Vec::new();
    let mut off = 0u32;
    for (m, d) in maps.iter().zip(defs) {
        let names: Vec<u32> = d.members.iter().map(|(n, _)| b.str(n)).collect();
        let st = b.ty(0, BTF_KIND_STRUCT, d.members.len() as u32, d.size() as u32);
        for (i, &(_, n)) in d.members.iter().enumerate() {
            let ptr = ptrs.iter().find(|p| p.0 == n).map_or(0, |p| p.1);
            b.u32(names[i]);
            b.u32(ptr);
            b.u32(i as u32 * 64);
        }
        let name = b.str(&m.name);
        let var = b.ty(name, BTF_KIND_VAR, 0, st);
        b.u32(BTF_VAR_GLOBAL_ALLOCATED);
        vars.push((var, off, d.size() as u32));
        off += d.size() as u32;
    }
    let sec_name = b.str(".maps");
    b.ty(sec_name, BTF_KIND_DATASEC, vars.len() as u32, off);
    for (var, off, size) in vars {
        b.u32(var);
        b.u32(off);
        b.u32(size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::{Asm, Src};

    fn ret0() -> Function {
        let mut a = Asm::new();
        a.ret(Src::Imm(0));
        a.finish().unwrap()
    }

    #[test]
    fn names_elf_cannot_hold_are_errors_not_panics() {
        let f = ret0();
        // The fuzz's case: a NUL in a tracepoint's name, in the section name.
        let err = write_object(
            &[ElfProgram {
                name: "p",
                section: "tracepoint/syscalls/\0x",
                func: &f,
            }],
            &[],
        )
        .unwrap_err();
        assert_eq!(err, ElfError::BadName("tracepoint/syscalls/\0x".into()));
        assert!(
            write_object(
                &[ElfProgram {
                    name: "",
                    section: "raw_tp/x",
                    func: &f,
                }],
                &[]
            )
            .is_err()
        );
        assert!(
            write_object(
                &[ElfProgram {
                    name: "p",
                    section: "raw_tp/x",
                    func: &f,
                }],
                &[]
            )
            .is_ok()
        );
    }
}
