//! A user binary's DWARF, read with gimli: each function's parameters with
//! their C types, the structs and unions those types name, and the source
//! line table (where `FILE:LINE` begins). What uprobes need for `args`,
//! `-lv` and `uprobe:BIN@FILE:LINE`.
//!
//! The debug information may be in the binary, in a separate debug file
//! (the caller finds it by build id or debug link and passes its bytes), or
//! split: a skeleton unit in the binary names its `.dwo` file (read through
//! the caller's `find` function) or the `.dwp` package beside it.
//!
//! Types are kept as C spells them (`struct Foo *`, `const char *`), with
//! what a reader needs: integer width and sign, pointer, array length,
//! struct size and members. Compressed debug sections are not read.

use std::collections::HashMap;

use gimli::{AttributeValue, EndianSlice, LittleEndian, SectionId, UnitOffset};
use object::read::elf::{ElfFile64, SectionHeader};
use object::{Endianness, elf};

use crate::binary::ElfError;

type R<'a> = EndianSlice<'a, LittleEndian>;

/// What a type is, as far as reading a value of it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeKind {
    Void,
    /// An integer, enum or `_Bool` of `size` bytes.
    Int {
        size: u32,
        signed: bool,
    },
    /// A plain `char` (or `signed char`/`unsigned char`): an array of them is a string.
    Char {
        signed: bool,
    },
    Float {
        size: u32,
    },
    Pointer,
    /// `len` elements (0: a flexible or unknown length).
    Array {
        elem: Box<DebugType>,
        len: u32,
    },
    /// A struct or union, found in [`DebugInfo::records`] by its C name.
    Record {
        size: u32,
    },
    /// A function type (only behind a pointer).
    Function,
}

/// A type: its C spelling and its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugType {
    /// `int`, `struct Foo *`, `const char *`, `int [3]`; for an anonymous
    /// struct or union, a name unique in the binary (`struct (anonymous at 0x2f)`).
    pub c_type: String,
    pub kind: TypeKind,
}

impl DebugType {
    fn new(c_type: impl Into<String>, kind: TypeKind) -> DebugType {
        DebugType {
            c_type: c_type.into(),
            kind,
        }
    }

    /// How bpftrace writes the type in `-lv`: the `*` joined to the type
    /// (`struct Foo*`, `char**`).
    pub fn listed(&self) -> String {
        self.c_type.replace(" *", "*")
    }
}

/// A parameter of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugParam {
    pub name: String,
    pub ty: DebugType,
}

/// A function defined in the binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugFunction {
    pub name: String,
    /// The entry address (`DW_AT_low_pc`), when it has code.
    pub address: Option<u64>,
    pub params: Vec<DebugParam>,
    /// True when the parameter list ends with `...`.
    pub variadic: bool,
}

/// A member of a struct or union.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugMember {
    /// Empty for an anonymous struct or union member.
    pub name: String,
    /// Bytes from the start of the record.
    pub offset: u32,
    pub ty: DebugType,
    /// Bits of a bitfield (0: not a bitfield).
    pub bit_size: u32,
    /// A bitfield's first bit from the start of the record
    /// (`DW_AT_data_bit_offset`); `None` when the DWARF does not say so
    /// (other members, or the older big-endian `DW_AT_bit_offset` form).
    pub bit_offset: Option<u32>,
}

/// A struct or union with its members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugRecord {
    /// `struct Foo`, `union u`.
    pub c_name: String,
    pub size: u32,
    pub members: Vec<DebugMember>,
}

/// The functions and types of one binary's DWARF.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DebugInfo {
    /// Functions with code, by name (the first definition of a name).
    pub functions: HashMap<String, DebugFunction>,
    /// Structs and unions by C name (the first complete definition).
    pub records: HashMap<String, DebugRecord>,
    /// Typedef names of structs and unions (`foo_t` → `struct foo`).
    pub aliases: HashMap<String, String>,
    /// The split DWARF files named but not found (`.dwo` paths as recorded).
    pub missing_dwo: Vec<String>,
}

/// The bytes of an ELF section by name; `Ok(None)` when the file has none.
fn section<'a>(data: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, ElfError> {
    let file = ElfFile64::<Endianness>::parse(data).map_err(|e| ElfError(e.to_string()))?;
    let endian = file.endian();
    let sections = file.elf_section_table();
    for s in sections.iter() {
        if sections.section_name(endian, s).unwrap_or(b"") != name.as_bytes() {
            continue;
        }
        if s.sh_type(endian) == elf::SHT_NOBITS {
            return Ok(None);
        }
        if s.sh_flags(endian).0 & elf::SHF_COMPRESSED.0 != 0 {
            return Err(ElfError(format!(
                "its {name} section is compressed, which weft does not read yet (decompress it with `objcopy --decompress-debug-sections`)"
            )));
        }
        return Ok(s.data(endian, data).ok());
    }
    Ok(None)
}

/// Loads every DWARF section of an ELF file (`.dwo` names when `dwo`).
fn load(data: &[u8], dwo: bool) -> Result<gimli::Dwarf<R<'_>>, ElfError> {
    gimli::Dwarf::load(|id: SectionId| -> Result<R<'_>, ElfError> {
        let name = if dwo { id.dwo_name() } else { Some(id.name()) };
        let bytes = match name {
            Some(n) => section(data, n)?.unwrap_or(&[]),
            None => &[],
        };
        Ok(EndianSlice::new(bytes, LittleEndian))
    })
}

/// True when the file has DWARF of its own (`.debug_info`).
pub fn has_dwarf(data: &[u8]) -> bool {
    matches!(section(data, ".debug_info"), Ok(Some(b)) if !b.is_empty())
}

fn err(e: gimli::Error) -> ElfError {
    ElfError(format!("DWARF: {e}"))
}

impl From<gimli::Error> for ElfError {
    fn from(e: gimli::Error) -> ElfError {
        err(e)
    }
}

impl DebugInfo {
    /// Reads the functions and types of `data` (an ELF file with DWARF).
    /// A skeleton unit's `.dwo` is asked of `find` by the path it records
    /// (joined to its compilation directory); `dwp` is the package file
    /// beside the binary, if any.
    pub fn parse(
        data: &[u8],
        find: &dyn Fn(&str) -> Option<Vec<u8>>,
        dwp: Option<&[u8]>,
    ) -> Result<DebugInfo, ElfError> {
        let dwarf = load(data, false)?;
        let package = match dwp {
            Some(bytes) => Some(
                gimli::DwarfPackage::load(
                    |id: SectionId| -> Result<R<'_>, ElfError> {
                        let bytes = match id.dwo_name() {
                            Some(n) => section(bytes, n)?.unwrap_or(&[]),
                            None => &[],
                        };
                        Ok(EndianSlice::new(bytes, LittleEndian))
                    },
                    EndianSlice::new(&[], LittleEndian),
                )
                .map_err(|e| ElfError(format!("{}.dwp: {e}", "the package")))?,
            ),
            None => None,
        };
        let mut info = DebugInfo::default();
        let mut units = dwarf.units();
        // The bytes of each `.dwo` read, kept while its units are walked.
        while let Some(header) = units.next().map_err(err)? {
            let unit = dwarf.unit(header).map_err(err)?;
            let Some(dwo_name) = unit.dwo_name().map_err(err)? else {
                info.walk(&dwarf, &unit)?;
                continue;
            };
            let dwo_name = dwarf.attr_string(&unit, dwo_name).map_err(err)?;
            let dwo_name = dwo_name.to_string_lossy().into_owned();
            let path = match (&unit.comp_dir, dwo_name.starts_with('/')) {
                (Some(dir), false) => format!("{}/{dwo_name}", dir.to_string_lossy()),
                _ => dwo_name.clone(),
            };
            if let (Some(package), Some(id)) = (&package, unit.dwo_id)
                && let Some(split) = package.find_cu(id, &dwarf).map_err(err)?
            {
                info.walk_split(&split, &unit)?;
                continue;
            }
            match find(&path) {
                Some(bytes) => {
                    let mut split = load(&bytes, true)?;
                    split.file_type = gimli::DwarfFileType::Dwo;
                    split.make_dwo(&dwarf);
                    info.walk_split(&split, &unit)?;
                }
                None => info.missing_dwo.push(path),
            }
        }
        Ok(info)
    }

    /// Walks the units of a split DWARF file that belong to `skeleton`.
    fn walk_split(
        &mut self,
        split: &gimli::Dwarf<R<'_>>,
        skeleton: &gimli::Unit<R<'_>>,
    ) -> Result<(), ElfError> {
        let mut units = split.units();
        while let Some(header) = units.next().map_err(err)? {
            let mut unit = split.unit(header).map_err(err)?;
            if unit.dwo_id.is_some() && unit.dwo_id != skeleton.dwo_id {
                continue;
            }
            unit.copy_relocated_attributes(skeleton);
            self.walk(split, &unit)?;
        }
        Ok(())
    }

    /// Notes the functions and records of one unit.
    fn walk(
        &mut self,
        dwarf: &gimli::Dwarf<R<'_>>,
        unit: &gimli::Unit<R<'_>>,
    ) -> Result<(), ElfError> {
        let types = TypeReader { dwarf, unit };
        let mut cursor = unit.entries();
        // The function whose parameters are being read, and its depth.
        let mut current: Option<(DebugFunction, isize, Option<String>)> = None;
        while let Some(entry) = cursor.next_dfs().map_err(err)? {
            let depth = entry.depth();
            if let Some((_, d, _)) = &current
                && depth <= *d
            {
                let (f, _, linkage) = current.take().expect("checked above");
                self.add_function(f, linkage);
            } else if let Some((_, d, _)) = &current
                && depth > *d + 1
            {
                continue;
            }
            match entry.tag() {
                gimli::DW_TAG_subprogram => {
                    let Some(name) = types.name(entry) else {
                        continue;
                    };
                    if entry.attr_value(gimli::DW_AT_declaration).is_some() {
                        continue;
                    }
                    let address = match entry.attr_value(gimli::DW_AT_low_pc) {
                        Some(v) => dwarf.attr_address(unit, v).map_err(err)?,
                        None => None,
                    };
                    let linkage = [gimli::DW_AT_linkage_name, gimli::DW_AT_MIPS_linkage_name]
                        .into_iter()
                        .find_map(|at| entry.attr_value(at))
                        .and_then(|v| dwarf.attr_string(unit, v).ok())
                        .map(|s| s.to_string_lossy().into_owned());
                    current = Some((
                        DebugFunction {
                            name,
                            address,
                            params: Vec::new(),
                            variadic: false,
                        },
                        depth,
                        linkage,
                    ));
                }
                gimli::DW_TAG_formal_parameter => {
                    if let Some((f, _, _)) = &mut current {
                        let name = types.name(entry).unwrap_or_default();
                        let ty = types.type_of(entry, 0);
                        f.params.push(DebugParam { name, ty });
                    }
                }
                gimli::DW_TAG_unspecified_parameters => {
                    if let Some((f, _, _)) = &mut current {
                        f.variadic = true;
                    }
                }
                gimli::DW_TAG_typedef => {
                    if let Some(name) = types.name(entry)
                        && let Some(AttributeValue::UnitRef(to)) =
                            entry.attr_value(gimli::DW_AT_type)
                        && let Ok(target) = unit.entry(to)
                        && matches!(
                            target.tag(),
                            gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type
                        )
                    {
                        let c_name = types.record_name(&target, types.name(&target));
                        self.aliases.entry(name).or_insert(c_name);
                    }
                }
                gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type => {
                    if entry.attr_value(gimli::DW_AT_declaration).is_some() {
                        continue;
                    }
                    let record = types.record(entry.offset(), 0);
                    if let Some(record) = record {
                        self.records.entry(record.c_name.clone()).or_insert(record);
                    }
                }
                _ => {}
            }
        }
        if let Some((f, _, linkage)) = current.take() {
            self.add_function(f, linkage);
        }
        // Anonymous records met as members are kept too, by their made-up names.
        for record in types.anonymous() {
            self.records.entry(record.c_name.clone()).or_insert(record);
        }
        Ok(())
    }

    /// Keeps a function under its name (and its linkage name, the symbol a
    /// C++ function has): the first with code wins; one without (the
    /// abstract instance an optimised build describes its inlined and
    /// out-of-line copies by, with the same parameters) only until then.
    fn add_function(&mut self, f: DebugFunction, linkage: Option<String>) {
        for name in std::iter::once(f.name.clone()).chain(linkage) {
            match self.functions.get(&name) {
                Some(kept) if kept.address.is_some() || f.address.is_none() => {}
                _ => {
                    self.functions.insert(name, f.clone());
                }
            }
        }
    }

    /// A struct or union by its C name.
    pub fn record(&self, c_name: &str) -> Option<&DebugRecord> {
        self.records.get(c_name)
    }
}

/// Type chains are short; this bounds malformed cycles.
const MAX_DEPTH: usize = 24;

/// Reads types of one unit by offset.
struct TypeReader<'d, 'a> {
    dwarf: &'d gimli::Dwarf<R<'a>>,
    unit: &'d gimli::Unit<R<'a>>,
}

impl TypeReader<'_, '_> {
    fn name(&self, entry: &gimli::DebuggingInformationEntry<R<'_>>) -> Option<String> {
        let v = entry.attr_value(gimli::DW_AT_name)?;
        let s = self.dwarf.attr_string(self.unit, v).ok()?;
        Some(s.to_string_lossy().into_owned())
    }

    fn udata(entry: &gimli::DebuggingInformationEntry<R<'_>>, at: gimli::DwAt) -> Option<u64> {
        entry.attr_value(at)?.udata_value()
    }

    /// The type an entry's `DW_AT_type` names (`void` when none).
    fn type_of(&self, entry: &gimli::DebuggingInformationEntry<R<'_>>, depth: usize) -> DebugType {
        match entry.attr_value(gimli::DW_AT_type) {
            Some(AttributeValue::UnitRef(offset)) => self.type_at(offset, depth + 1),
            Some(_) => DebugType::new("void", TypeKind::Void),
            None => DebugType::new("void", TypeKind::Void),
        }
    }

    fn type_at(&self, offset: UnitOffset, depth: usize) -> DebugType {
        let unknown = DebugType::new("void", TypeKind::Void);
        if depth > MAX_DEPTH {
            return unknown;
        }
        let Ok(entry) = self.unit.entry(offset) else {
            return unknown;
        };
        let size = Self::udata(&entry, gimli::DW_AT_byte_size).unwrap_or(0) as u32;
        let name = self.name(&entry);
        match entry.tag() {
            gimli::DW_TAG_base_type => {
                let name = name.unwrap_or_else(|| "int".into());
                let encoding = match entry.attr_value(gimli::DW_AT_encoding) {
                    Some(AttributeValue::Encoding(e)) => e,
                    _ => gimli::DW_ATE_signed,
                };
                let kind = match encoding {
                    gimli::DW_ATE_signed_char => TypeKind::Char { signed: true },
                    gimli::DW_ATE_unsigned_char => TypeKind::Char { signed: false },
                    gimli::DW_ATE_float => TypeKind::Float { size },
                    gimli::DW_ATE_signed => TypeKind::Int { size, signed: true },
                    _ => TypeKind::Int {
                        size,
                        signed: false,
                    },
                };
                DebugType::new(name, kind)
            }
            gimli::DW_TAG_enumeration_type => {
                let signed = match entry.attr_value(gimli::DW_AT_type) {
                    Some(AttributeValue::UnitRef(o)) => {
                        matches!(
                            self.type_at(o, depth + 1).kind,
                            TypeKind::Int { signed: true, .. }
                        )
                    }
                    _ => false,
                };
                let c = match name {
                    Some(n) => format!("enum {n}"),
                    None => "enum".into(),
                };
                DebugType::new(
                    c,
                    TypeKind::Int {
                        size: size.max(1),
                        signed,
                    },
                )
            }
            gimli::DW_TAG_pointer_type
            | gimli::DW_TAG_reference_type
            | gimli::DW_TAG_rvalue_reference_type => {
                let to = self.type_of(&entry, depth);
                let c = match to.kind {
                    // A function pointer is spelt as the pointer it is.
                    TypeKind::Function => "void *".to_string(),
                    _ if to.c_type.ends_with('*') => format!("{}*", to.c_type),
                    _ => format!("{} *", to.c_type),
                };
                DebugType::new(c, TypeKind::Pointer)
            }
            gimli::DW_TAG_const_type | gimli::DW_TAG_volatile_type => {
                let inner = self.type_of(&entry, depth);
                let word = if entry.tag() == gimli::DW_TAG_const_type {
                    "const"
                } else {
                    "volatile"
                };
                // `const char *`: the qualifier before a named type; after a `*`.
                let c = if inner.c_type.ends_with('*') {
                    format!("{} {word}", inner.c_type)
                } else {
                    format!("{word} {}", inner.c_type)
                };
                DebugType::new(c, inner.kind)
            }
            gimli::DW_TAG_restrict_type | gimli::DW_TAG_atomic_type => self.type_of(&entry, depth),
            gimli::DW_TAG_typedef => {
                let inner = self.type_of(&entry, depth);
                DebugType::new(name.unwrap_or(inner.c_type), inner.kind)
            }
            gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type | gimli::DW_TAG_class_type => {
                let c = self.record_name(&entry, name);
                DebugType::new(c, TypeKind::Record { size })
            }
            gimli::DW_TAG_array_type => {
                let elem = self.type_of(&entry, depth);
                let mut lens = Vec::new();
                if let Ok(mut tree) = self.unit.entries_tree(Some(offset))
                    && let Ok(root) = tree.root()
                {
                    let mut children = root.children();
                    while let Ok(Some(child)) = children.next() {
                        let e = child.entry();
                        if e.tag() != gimli::DW_TAG_subrange_type {
                            continue;
                        }
                        let len = Self::udata(e, gimli::DW_AT_count)
                            .or_else(|| Self::udata(e, gimli::DW_AT_upper_bound).map(|u| u + 1));
                        lens.push(len.unwrap_or(0) as u32);
                    }
                }
                if lens.is_empty() {
                    lens.push(0);
                }
                // `int x[2][3]`: an array of 2 arrays of 3.
                let mut ty = elem;
                for len in lens.iter().rev() {
                    let c = format!("{} [{len}]", ty.c_type);
                    ty = DebugType::new(
                        c,
                        TypeKind::Array {
                            elem: Box::new(ty),
                            len: *len,
                        },
                    );
                }
                ty
            }
            gimli::DW_TAG_subroutine_type => DebugType::new("void (*)()", TypeKind::Function),
            _ => unknown,
        }
    }

    /// `struct Foo`, or for an anonymous one a name made from its place.
    fn record_name(
        &self,
        entry: &gimli::DebuggingInformationEntry<R<'_>>,
        name: Option<String>,
    ) -> String {
        let word = if entry.tag() == gimli::DW_TAG_union_type {
            "union"
        } else {
            "struct"
        };
        match name {
            Some(n) => format!("{word} {n}"),
            None => {
                let at = entry.offset().to_unit_section_offset(self.unit).0;
                format!("{word} (anonymous at {at:#x})")
            }
        }
    }

    /// The struct or union at `offset` with its members.
    fn record(&self, offset: UnitOffset, depth: usize) -> Option<DebugRecord> {
        if depth > MAX_DEPTH {
            return None;
        }
        let entry = self.unit.entry(offset).ok()?;
        let name = self.name(&entry);
        let c_name = self.record_name(&entry, name);
        let size = Self::udata(&entry, gimli::DW_AT_byte_size).unwrap_or(0) as u32;
        let mut members = Vec::new();
        let mut tree = self.unit.entries_tree(Some(offset)).ok()?;
        let root = tree.root().ok()?;
        let mut children = root.children();
        while let Ok(Some(child)) = children.next() {
            let e = child.entry();
            if e.tag() != gimli::DW_TAG_member {
                continue;
            }
            let name = self.name(e).unwrap_or_default();
            let ty = self.type_of(e, depth);
            let bit_size = Self::udata(e, gimli::DW_AT_bit_size).unwrap_or(0) as u32;
            let bits = Self::udata(e, gimli::DW_AT_data_bit_offset);
            let offset = match (Self::udata(e, gimli::DW_AT_data_member_location), bits) {
                (Some(bytes), _) => bytes as u32,
                (None, Some(bits)) => (bits / 8) as u32,
                (None, None) => 0,
            };
            members.push(DebugMember {
                name,
                offset,
                ty,
                bit_size,
                bit_offset: bits.filter(|_| bit_size != 0).map(|b| b as u32),
            });
        }
        Some(DebugRecord {
            c_name,
            size,
            members,
        })
    }

    /// The anonymous structs and unions of this unit (members without names
    /// or types without names), by their made-up names.
    fn anonymous(&self) -> Vec<DebugRecord> {
        let mut out = Vec::new();
        let mut cursor = self.unit.entries();
        while let Ok(Some(entry)) = cursor.next_dfs() {
            if matches!(
                entry.tag(),
                gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type
            ) && entry.attr_value(gimli::DW_AT_name).is_none()
            {
                let offset = entry.offset();
                if let Some(r) = self.record(offset, 0) {
                    out.push(r);
                }
            }
        }
        out
    }
}

/// The addresses where source line `line` (and column `column`, unless 0)
/// of file `file` (a base name or a path's tail) begins: the first address
/// of each run of rows the line has, in the line table's order (bpftrace
/// attaches at the first).
pub fn line_addresses(
    data: &[u8],
    file: &str,
    line: u64,
    column: u64,
) -> Result<Vec<u64>, ElfError> {
    let dwarf = load(data, false)?;
    let mut out = Vec::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next().map_err(err)? {
        let unit = dwarf.unit(header).map_err(err)?;
        let Some(program) = unit.line_program.clone() else {
            continue;
        };
        let mut rows = program.rows();
        let mut previous_matched = false;
        while let Some((header, row)) = rows.next_row().map_err(err)? {
            if row.end_sequence() {
                previous_matched = false;
                continue;
            }
            let column_matches = column == 0
                || matches!(row.column(), gimli::ColumnType::Column(c) if c.get() == column);
            let matched = row.line().map(|l| l.get()) == Some(line)
                && column_matches
                && row
                    .file(header)
                    .and_then(|f| dwarf.attr_string(&unit, f.path_name()).ok())
                    .map(|p| p.to_string_lossy().into_owned())
                    .is_some_and(|p| {
                        p == file
                            || p.ends_with(&format!("/{file}"))
                            || file.ends_with(&format!("/{p}"))
                    });
            if matched && !previous_matched {
                out.push(row.address());
            }
            previous_matched = matched;
        }
    }
    Ok(out)
}
