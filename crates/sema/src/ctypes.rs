//! C types as scripts write them: integer type names (`unsigned long`,
//! `u32`, `pid_t`), what a pointer type points to, and (see
//! [`ScriptTypes`]) the structs, unions and enums a script defines.
//!
//! bpftrace hands a script's C definitions to clang; weft reads them itself:
//! `struct`/`union` definitions with members of integer, pointer, array,
//! enum and struct types, bitfields among them, (a struct the script defines, or one of the
//! kernel's BTF by value), nested and anonymous structs and unions, and
//! `enum` definitions, whose enumerators become constants of their enum
//! (printed as their names, as bpftrace prints them). Layouts follow
//! the C rules of x86-64 and arm64 (each member at a multiple of its
//! alignment, the size rounded up to the largest one; a bitfield follows the
//! one before it unless it would cross a unit of its type's size, where it
//! starts the next unit; `packed` lets it cross; `: 0` ends the unit). A
//! struct the script defines hides the kernel's struct of that name, as in
//! bpftrace. Not read yet (an error says so): `typedef`, attributes other than
//! `packed` and `aligned(N)` after a body, function pointers other than as
//! plain pointers.

use std::collections::HashMap;
use std::sync::Arc;

use abi::EnumDef;

use ktypes::Btf;
use ktypes::btf::kind;
use source::{Diagnostic, Span};
use syntax::ast::{Item, StructDef};

use crate::diagnostics as diag;

/// The size and signedness of a C or bpftrace integer type name
/// (qualifiers ignored), if it is one.
pub fn int_type(name: &str) -> Option<(u8, bool)> {
    let words: Vec<&str> = name
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict"))
        .collect();
    let one = match words.as_slice() {
        [w] => Some(*w),
        _ => None,
    };
    if let Some(w) = one {
        let fixed = match w {
            "int8" | "s8" | "__s8" | "int8_t" | "i8" => Some((1, true)),
            "uint8" | "u8" | "__u8" | "uint8_t" | "bool" | "_Bool" => Some((1, false)),
            "int16" | "s16" | "__s16" | "int16_t" | "i16" => Some((2, true)),
            "uint16" | "u16" | "__u16" | "uint16_t" | "__be16" | "__le16" => Some((2, false)),
            "int32" | "s32" | "__s32" | "int32_t" | "i32" | "pid_t" | "ssize32_t" => {
                Some((4, true))
            }
            "uint32" | "u32" | "__u32" | "uint32_t" | "__be32" | "__le32" | "uid_t" | "gid_t"
            | "dev_t" | "umode_t" | "__kernel_dev_t" => Some((4, false)),
            "int64" | "s64" | "__s64" | "int64_t" | "i64" | "ssize_t" | "loff_t" | "time64_t" => {
                Some((8, true))
            }
            "uint64" | "u64" | "__u64" | "uint64_t" | "__be64" | "__le64" | "size_t"
            | "uintptr_t" | "sector_t" => Some((8, false)),
            _ => None,
        };
        if fixed.is_some() {
            return fixed;
        }
    }
    // C's own spellings: `unsigned long long int`, `signed char`, `short`.
    let mut signed = true;
    let mut explicit_sign = false;
    let mut longs = 0;
    let mut base = None;
    for w in &words {
        match *w {
            "unsigned" => {
                signed = false;
                explicit_sign = true;
            }
            "signed" => explicit_sign = true,
            "long" => longs += 1,
            "char" | "short" | "int" if base.is_none() => base = Some(*w),
            _ => return None,
        }
    }
    let size = match (base, longs) {
        (Some("char"), 0) => 1,
        (Some("short"), 0) => 2,
        (Some("int") | None, 0) if explicit_sign || base.is_some() => 4,
        (Some("int") | None, 1 | 2) => 8,
        _ => return None,
    };
    // A plain `char` is signed on x86-64, as the kernel is built.
    Some((size, signed))
}

/// What a pointer's C type (`int *`, `struct file **`) points to, without
/// the last `*`; `None` when it is no pointer type.
pub fn pointee(c_type: &str) -> Option<&str> {
    c_type
        .trim_end()
        .strip_suffix('*')
        .map(str::trim_end)
        .filter(|p| !p.is_empty())
}

/// A C type spelling without its qualifiers at any level, `*`s spaced
/// alike: `const char *const *` and `char**` are both `char * *`.
pub fn without_qualifiers(c_type: &str) -> String {
    c_type
        .replace('*', " * ")
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The type of a member of a script-defined struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CType {
    Int {
        size: u8,
        signed: bool,
    },
    /// A plain `char` (signed, one byte): an array of them is a string, as
    /// bpftrace's C parser has it (`unsigned char`, `uint8_t` arrays are arrays).
    Char,
    /// A pointer, by its C spelling (`struct path *`).
    Pointer(String),
    Array {
        elem: Box<CType>,
        len: u32,
    },
    /// A struct or union by its C name (`struct qstr`), the script's or the
    /// kernel's.
    Record(String),
    /// `float`, `double`, `long double` (of `size` bytes): BPF has no
    /// floating point, so as in bpftrace a struct holding one prints it as
    /// `null` and it cannot be read on its own.
    Float {
        size: u32,
    },
}

/// A member of a script-defined struct or union.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CMember {
    /// Empty for an anonymous struct or union member (its members are
    /// found through it, as in C).
    pub name: String,
    /// The byte it starts in (a bitfield: the byte of its first bit).
    pub offset: u32,
    pub ty: CType,
    /// Where its bits are, for a bitfield.
    pub bits: Option<Bits>,
}

/// A bitfield's place: `width` bits from bit `shift` (0..8) of the byte
/// at its member's offset, counted from the least significant bit (the
/// little-endian order of x86-64 and arm64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bits {
    pub shift: u8,
    pub width: u8,
}

impl Bits {
    /// A bitfield at bit `bit_offset` of its record, `width` bits wide:
    /// the byte it starts in and its place from there.
    pub fn at(bit_offset: u32, width: u32) -> (u32, Bits) {
        (
            bit_offset / 8,
            Bits {
                shift: (bit_offset % 8) as u8,
                width: width.min(64) as u8,
            },
        )
    }

    /// How many bytes hold it, from the byte it starts in: 1, 2, 4 or 8
    /// (0 for a field that would need more than 8, which nothing reads).
    pub fn window(self) -> u8 {
        match (u32::from(self.shift) + u32::from(self.width)).div_ceil(8) {
            0 | 1 => 1,
            2 => 2,
            3 | 4 => 4,
            5..=8 => 8,
            _ => 0,
        }
    }
}

/// A struct or union the script defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CRecord {
    /// `struct cfs_rq`, `union u`; anonymous ones are named after their place.
    pub c_name: String,
    pub size: u32,
    pub align: u32,
    pub members: Vec<CMember>,
}

/// A member found by name (through anonymous members): its offset from the
/// start of the record and its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundMember {
    pub offset: u32,
    pub ty: CType,
    pub bits: Option<Bits>,
}

/// The C definitions of one script.
#[derive(Clone, Debug, Default)]
pub struct ScriptTypes {
    records: HashMap<String, CRecord>,
    /// Each enumerator's value and the enum it belongs to.
    enumerators: HashMap<String, (i64, Arc<EnumDef>)>,
    /// The enums by name (`Foo` of `enum Foo`).
    enums: HashMap<String, Arc<EnumDef>>,
}

impl ScriptTypes {
    /// Reads every `struct`/`union`/`enum` definition of the script (in
    /// written order: a definition may use the ones above it), reporting
    /// what it cannot read. `btf` sizes kernel structs used by value.
    pub fn collect(items: &[Item], btf: Option<&Btf>) -> (ScriptTypes, Vec<Diagnostic>) {
        let mut types = ScriptTypes::default();
        let mut diags = Vec::new();
        for item in items {
            if let Item::StructDef(def) = item {
                let mut p = DefParser::new(def, btf, &mut types);
                if let Err(d) = p.definition() {
                    diags.push(*d);
                }
            }
        }
        (types, diags)
    }

    /// Adds the structs and unions of a user binary's DWARF that the script
    /// does not define itself (its own definitions hide them, as in
    /// bpftrace): a uprobe's `args`, casts and members then use them as the
    /// script's own. Bitfield members whose first bit the DWARF does not
    /// give (`DW_AT_data_bit_offset`) are left out.
    pub fn add_debug_records(&mut self, info: &uelf::dwarf::DebugInfo) {
        for record in info.records.values() {
            let c_name = normalise(&record.c_name);
            if self.records.contains_key(&c_name) {
                continue;
            }
            let members: Vec<CMember> = record
                .members
                .iter()
                .filter_map(|m| {
                    let (offset, bits) = match (m.bit_size, m.bit_offset) {
                        (0, _) => (m.offset, None),
                        (width, Some(at)) => {
                            let (offset, bits) = Bits::at(at, width);
                            (offset, Some(bits))
                        }
                        (_, None) => return None,
                    };
                    Some(CMember {
                        name: m.name.clone(),
                        offset,
                        ty: debug_ctype(&m.ty),
                        bits,
                    })
                })
                .collect();
            let align = if record.size >= 8 {
                8
            } else {
                record.size.next_power_of_two().max(1)
            };
            self.records.insert(
                c_name.clone(),
                CRecord {
                    c_name,
                    size: record.size,
                    align,
                    members,
                },
            );
        }
        for (alias, c_name) in &info.aliases {
            if !self.records.contains_key(alias)
                && let Some(r) = self.records.get(&normalise(c_name)).cloned()
            {
                self.records.insert(alias.clone(), r);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.enumerators.is_empty()
    }

    /// The struct or union the script defines under this C name
    /// (`struct cfs_rq`, qualifiers ignored).
    pub fn record(&self, c_name: &str) -> Option<&CRecord> {
        self.records.get(&normalise(c_name))
    }

    /// An enumerator of the script's enums.
    pub fn enumerator(&self, name: &str) -> Option<i64> {
        self.enumerators.get(name).map(|(v, _)| *v)
    }

    /// The enum an enumerator of the script belongs to.
    pub fn enumerator_enum(&self, name: &str) -> Option<Arc<EnumDef>> {
        self.enumerators.get(name).map(|(_, def)| def.clone())
    }

    /// The script's enum of this name (`Foo` for `enum Foo`).
    pub fn enum_def(&self, name: &str) -> Option<Arc<EnumDef>> {
        self.enums.get(name).cloned()
    }

    /// Member `name` of `record`, looking through anonymous members.
    pub fn member(&self, record: &CRecord, name: &str) -> Option<FoundMember> {
        self.member_depth(record, name, 0)
    }

    fn member_depth(&self, record: &CRecord, name: &str, depth: usize) -> Option<FoundMember> {
        if depth > 16 {
            return None;
        }
        for m in &record.members {
            if m.name == name {
                return Some(FoundMember {
                    offset: m.offset,
                    ty: m.ty.clone(),
                    bits: m.bits,
                });
            }
            if m.name.is_empty()
                && let CType::Record(inner) = &m.ty
                && let Some(inner) = self.record(inner)
                && let Some(found) = self.member_depth(inner, name, depth + 1)
            {
                return Some(FoundMember {
                    offset: m.offset + found.offset,
                    ty: found.ty,
                    bits: found.bits,
                });
            }
        }
        None
    }

    /// The names `->`/`.` may use on `record` (for "did you mean").
    pub fn member_names<'r>(&'r self, record: &'r CRecord) -> Vec<&'r str> {
        let mut out = Vec::new();
        for m in &record.members {
            match (&m.ty, m.name.is_empty()) {
                (CType::Record(inner), true) => {
                    if let Some(inner) = self.record(inner) {
                        out.extend(self.member_names(inner));
                    }
                }
                _ => out.push(m.name.as_str()),
            }
        }
        out
    }

    /// The size and alignment of a type: the script's records first, then
    /// the kernel's BTF.
    fn size_align(&self, ty: &CType, btf: Option<&Btf>) -> Result<(u32, u32), String> {
        match ty {
            CType::Int { size, .. } => Ok((u32::from(*size), u32::from(*size))),
            CType::Char => Ok((1, 1)),
            CType::Pointer(_) => Ok((8, 8)),
            CType::Float { size } => Ok((*size, *size)),
            CType::Array { elem, len } => {
                let (size, align) = self.size_align(elem, btf)?;
                Ok((size.saturating_mul(*len), align))
            }
            CType::Record(name) => {
                if let Some(r) = self.record(name) {
                    return Ok((r.size, r.align));
                }
                let btf = btf.ok_or_else(|| {
                    format!("`{name}` is neither defined above nor known without the kernel's BTF")
                })?;
                let id = btf_record(btf, name).ok_or_else(|| {
                    format!("`{name}` is neither defined above nor in the kernel's BTF")
                })?;
                let size = btf.size_of(id);
                // BTF gives no alignment: kernel structs hold longs or pointers.
                let align = if size >= 8 {
                    8
                } else {
                    size.next_power_of_two().max(1)
                };
                Ok((size, align))
            }
        }
    }

    /// The size of a type written in `sizeof(...)`: an integer type, a
    /// pointer, a script's struct or one of the kernel's.
    pub fn size_of_name(&self, base: &str, btf: Option<&Btf>) -> Option<u32> {
        let base = normalise(base);
        if let Some((size, _)) = int_type(&base) {
            return Some(u32::from(size));
        }
        if base.starts_with("struct ") || base.starts_with("union ") {
            if self.record(&base).is_none() && btf.is_none() {
                return None;
            }
            return self
                .size_align(&CType::Record(base), btf)
                .ok()
                .map(|(s, _)| s);
        }
        if base.starts_with("enum ") {
            return Some(4);
        }
        let btf = btf?;
        let id = btf.find(kind::TYPEDEF, &base)?;
        Some(btf.size_of(id))
    }
}

/// A DWARF type as the type of a member: a plain `char` array is a string,
/// as for the script's own definitions; a float is printed `null`, as
/// bpftrace does; what weft does not read (functions) is kept as bytes.
fn debug_ctype(t: &uelf::dwarf::DebugType) -> CType {
    use uelf::dwarf::TypeKind;
    let bytes = |size: u32| CType::Array {
        elem: Box::new(CType::Int {
            size: 1,
            signed: false,
        }),
        len: size,
    };
    match &t.kind {
        TypeKind::Int { size, signed } => match u8::try_from(*size) {
            Ok(size) => CType::Int {
                size,
                signed: *signed,
            },
            Err(_) => bytes(*size),
        },
        TypeKind::Char { signed: true } => CType::Char,
        TypeKind::Char { signed: false } => CType::Int {
            size: 1,
            signed: false,
        },
        TypeKind::Float { size } => CType::Float { size: *size },
        TypeKind::Pointer => CType::Pointer(t.c_type.clone()),
        TypeKind::Array { elem, len } => CType::Array {
            elem: Box::new(debug_ctype(elem)),
            len: *len,
        },
        TypeKind::Record { .. } => CType::Record(t.c_type.clone()),
        TypeKind::Void | TypeKind::Function => bytes(0),
    }
}

/// `struct  foo` → `struct foo`, qualifiers dropped.
fn normalise(c_name: &str) -> String {
    c_name
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A struct or union of the kernel's BTF by its C name.
fn btf_record(btf: &Btf, c_name: &str) -> Option<u32> {
    let c_name = normalise(c_name);
    let (k, name) = if let Some(n) = c_name.strip_prefix("struct ") {
        (kind::STRUCT, n)
    } else {
        (kind::UNION, c_name.strip_prefix("union ")?)
    };
    btf.find(k, name.trim())
}

/// One token of a C definition, with its byte offset in the definition.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Int(u64),
    Punct(char),
}

fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, (usize, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(b.len(), |n| i + n);
        } else if text[i..].starts_with("/*") {
            i = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(text[start..i].to_string()), start));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric()) {
                i += 1;
            }
            let word = text[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let v = if let Some(hex) = word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
                u64::from_str_radix(hex, 16)
            } else {
                word.parse()
            };
            let v = v.map_err(|_| (start, format!("`{}` is not a number", &text[start..i])))?;
            out.push((Tok::Int(v), start));
        } else if "{}[];,*:()=-+<>|&~".contains(c as char) {
            out.push((Tok::Punct(c as char), i));
            i += 1;
        } else {
            return Err((i, format!("unexpected `{}`", c as char)));
        }
    }
    Ok(out)
}

/// Reads one `struct`/`union`/`enum` definition into [`ScriptTypes`].
struct DefParser<'d> {
    def: &'d StructDef,
    btf: Option<&'d Btf>,
    types: &'d mut ScriptTypes,
    tokens: Vec<(Tok, usize)>,
    at: usize,
    /// Names for anonymous records, unique per script.
    anonymous: usize,
    /// The `__attribute__`s after the definition's body, for its record.
    attributes: Attributes,
}

/// What `__attribute__((packed, aligned(N)))` asks of a record's layout.
#[derive(Clone, Copy, Debug, Default)]
struct Attributes {
    /// Members one after another, without padding (alignment 1).
    packed: bool,
    /// At least this alignment.
    aligned: Option<u32>,
}

impl<'d> DefParser<'d> {
    fn new(def: &'d StructDef, btf: Option<&'d Btf>, types: &'d mut ScriptTypes) -> DefParser<'d> {
        DefParser {
            def,
            btf,
            types,
            tokens: Vec::new(),
            at: 0,
            anonymous: 0,
            attributes: Attributes::default(),
        }
    }

    /// A diagnostic at byte `offset` of the definition.
    fn error_at(&self, offset: usize, problem: &str) -> Box<Diagnostic> {
        // One character wide: a span never ends inside a UTF-8 sequence.
        let width = self
            .def
            .text
            .get(offset..)
            .and_then(|rest| rest.chars().next())
            .map_or(1, char::len_utf8) as u32;
        let start = self.def.span.start + offset as u32;
        let span = Span::new(start, (start + width).min(self.def.span.end));
        Box::new(diag::bad_c_definition(span, problem))
    }

    fn error(&self, problem: &str) -> Box<Diagnostic> {
        let offset = self
            .tokens
            .get(self.at)
            .map_or(self.def.text.len().saturating_sub(1), |(_, o)| *o);
        self.error_at(offset, problem)
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|(t, _)| t)
    }

    fn eat(&mut self, c: char) -> bool {
        let hit = self.peek() == Some(&Tok::Punct(c));
        if hit {
            self.at += 1;
        }
        hit
    }

    fn expect(&mut self, c: char) -> Result<(), Box<Diagnostic>> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected `{c}`")))
        }
    }

    fn ident(&mut self) -> Option<String> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.at += 1;
                Some(s)
            }
            _ => None,
        }
    }

    fn definition(&mut self) -> Result<(), Box<Diagnostic>> {
        self.tokens = tokenize(&self.def.text).map_err(|(at, why)| self.error_at(at, &why))?;
        let keyword = self.ident().unwrap_or_default();
        match keyword.as_str() {
            "struct" | "union" => {
                let name = self.ident();
                if self.peek() != Some(&Tok::Punct('{')) {
                    return Err(self.error("expected `{`: only definitions are read here"));
                }
                let c_name = match name {
                    Some(n) => format!("{keyword} {n}"),
                    None => self.anonymous_name(&keyword),
                };
                self.attributes = self.trailing_attributes()?;
                self.record_body(&keyword, c_name)?;
            }
            "enum" => {
                let name = self.ident();
                self.enum_body(name)?;
            }
            other => {
                return Err(self.error_at(0, &format!("`{other}` definitions are not read yet")));
            }
        }
        self.eat(';');
        if self.at < self.tokens.len() {
            return Err(self.error("a declaration after a definition is not read yet"));
        }
        Ok(())
    }

    fn anonymous_name(&mut self, keyword: &str) -> String {
        self.anonymous += 1;
        format!(
            "{keyword} (anonymous at {}+{})",
            self.def.span.start, self.anonymous
        )
    }

    /// Reads (and removes) the `__attribute__((...))`s after the body that
    /// starts at the current token: `packed` and `aligned(N)`.
    fn trailing_attributes(&mut self) -> Result<Attributes, Box<Diagnostic>> {
        let mut depth = 0usize;
        let mut close = None;
        for (i, (t, _)) in self.tokens.iter().enumerate().skip(self.at) {
            match t {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            return Ok(Attributes::default());
        };
        let mut attributes = Attributes::default();
        let mut i = close + 1;
        let punct = |i: usize, c: char, toks: &[(Tok, usize)]| {
            toks.get(i).map(|(t, _)| t) == Some(&Tok::Punct(c))
        };
        while matches!(self.tokens.get(i), Some((Tok::Ident(w), _)) if w == "__attribute__") {
            let at = self.tokens[i].1;
            if !(punct(i + 1, '(', &self.tokens) && punct(i + 2, '(', &self.tokens)) {
                return Err(self.error_at(at, "expected `__attribute__((...))`"));
            }
            i += 3;
            loop {
                let (name, name_at) = match self.tokens.get(i) {
                    Some((Tok::Ident(w), o)) => (w.trim_matches('_').to_string(), *o),
                    _ => return Err(self.error_at(at, "expected an attribute name")),
                };
                i += 1;
                match name.as_str() {
                    "packed" => attributes.packed = true,
                    "aligned" => {
                        let n = match (self.tokens.get(i), self.tokens.get(i + 1)) {
                            (Some((Tok::Punct('('), _)), Some((Tok::Int(n), _)))
                                if punct(i + 2, ')', &self.tokens) =>
                            {
                                i += 3;
                                *n
                            }
                            // `aligned` alone: the largest alignment, 16 on x86-64.
                            _ => 16,
                        };
                        if !n.is_power_of_two() || n > 1 << 16 {
                            return Err(self.error_at(name_at, "an alignment is a power of two"));
                        }
                        attributes.aligned = Some(n as u32);
                    }
                    other => {
                        return Err(self.error_at(
                            name_at,
                            &format!("the attribute `{other}` is not read (weft reads `packed` and `aligned(N)`)"),
                        ));
                    }
                }
                if !punct(i, ',', &self.tokens) {
                    break;
                }
                i += 1;
            }
            if !(punct(i, ')', &self.tokens) && punct(i + 1, ')', &self.tokens)) {
                return Err(self.error_at(at, "expected `))` after the attributes"));
            }
            i += 2;
        }
        self.tokens.drain(close + 1..i);
        Ok(attributes)
    }

    /// `{ members }` of a struct or union named `c_name`; registers it.
    fn record_body(&mut self, keyword: &str, c_name: String) -> Result<(), Box<Diagnostic>> {
        self.expect('{')?;
        // Only the outermost record has the definition's attributes.
        let attributes = std::mem::take(&mut self.attributes);
        let union = keyword == "union";
        let mut members: Vec<CMember> = Vec::new();
        // `bits`: where the next member may start, in bits (bitfields
        // start mid-byte); `size`: the bytes used so far.
        let (mut size, mut align, mut bits) = (0u32, 1u32, 0u32);
        while !self.eat('}') {
            if self.peek().is_none() {
                return Err(self.error("expected `}`"));
            }
            let type_at = self.tokens.get(self.at).map_or(0, |(_, o)| *o);
            let (base, anonymous_record) = self.type_spec()?;
            if anonymous_record && self.eat(';') {
                // An anonymous struct or union member: its members are found through it.
                let (s, a) = self.layout(&base, type_at)?;
                let a = if attributes.packed { 1 } else { a };
                let offset = if union {
                    0
                } else {
                    bits.div_ceil(8).next_multiple_of(a)
                };
                members.push(CMember {
                    name: String::new(),
                    offset,
                    ty: base,
                    bits: None,
                });
                size = if union { size.max(s) } else { offset + s };
                bits = size * 8;
                align = align.max(a);
                continue;
            }
            loop {
                // `int : 3;` (an unnamed bitfield) only pads.
                let (name, ty) = if self.peek() == Some(&Tok::Punct(':')) {
                    (String::new(), base.clone())
                } else {
                    self.declarator(base.clone())?
                };
                let (s, a) = self.layout(&ty, type_at)?;
                let a = if attributes.packed { 1 } else { a };
                if self.eat(':') {
                    let width = self.bitfield_width(&ty, s)?;
                    let start = if union {
                        0
                    } else if width == 0 {
                        // `: 0` closes the unit: the next member starts a new one.
                        bits.next_multiple_of(s * 8)
                    } else if !attributes.packed && bits / (s * 8) != (bits + width - 1) / (s * 8) {
                        bits.next_multiple_of(s * 8)
                    } else {
                        bits
                    };
                    let end = start + width;
                    if !name.is_empty() {
                        if members.iter().any(|m| m.name == name) {
                            return Err(self.error(&format!("member `{name}` is declared twice")));
                        }
                        let (offset, place) = Bits::at(start, width);
                        members.push(CMember {
                            name,
                            offset,
                            ty,
                            bits: Some(place),
                        });
                        align = align.max(a);
                    }
                    size = if union {
                        size.max(end.div_ceil(8))
                    } else {
                        end.div_ceil(8)
                    };
                    bits = if union { 0 } else { end };
                } else {
                    let offset = if union {
                        0
                    } else {
                        bits.div_ceil(8).next_multiple_of(a)
                    };
                    if members.iter().any(|m| m.name == name) {
                        return Err(self.error(&format!("member `{name}` is declared twice")));
                    }
                    members.push(CMember {
                        name,
                        offset,
                        ty,
                        bits: None,
                    });
                    size = if union { size.max(s) } else { offset + s };
                    bits = if union { 0 } else { size * 8 };
                    align = align.max(a);
                }
                if !self.eat(',') {
                    break;
                }
            }
            // clang takes a last member without its `;` (with a warning).
            if self.peek() != Some(&Tok::Punct('}')) {
                self.expect(';')?;
            }
        }
        if attributes.packed {
            align = 1;
        }
        if let Some(n) = attributes.aligned {
            align = align.max(n);
        }
        let record = CRecord {
            c_name: c_name.clone(),
            size: size.next_multiple_of(align),
            align,
            members,
        };
        self.types.records.insert(c_name, record);
        Ok(())
    }

    /// The width after a bitfield's `:`, for a member of type `ty` (`size`
    /// bytes): an integer type, at most as wide as it.
    fn bitfield_width(&mut self, ty: &CType, size: u32) -> Result<u32, Box<Diagnostic>> {
        if !matches!(ty, CType::Int { .. } | CType::Char) {
            return Err(self.error("a bitfield has an integer type"));
        }
        let Some(Tok::Int(n)) = self.peek().cloned() else {
            return Err(self.error("expected a bitfield width"));
        };
        self.at += 1;
        match u32::try_from(n) {
            Ok(w) if w <= size * 8 => Ok(w),
            _ => Err(self.error(&format!(
                "a bitfield of a {size}-byte type holds at most {} bits",
                size * 8
            ))),
        }
    }

    /// The size and alignment of a member's type (written at byte `at`).
    fn layout(&self, ty: &CType, at: usize) -> Result<(u32, u32), Box<Diagnostic>> {
        self.types
            .size_align(ty, self.btf)
            .map_err(|why| self.error_at(at, &why))
    }

    /// A type specifier: `unsigned long`, `struct path`, `u32`, or a nested
    /// `struct { ... }` (true when it is an anonymous definition).
    fn type_spec(&mut self) -> Result<(CType, bool), Box<Diagnostic>> {
        let mut words = Vec::new();
        while let Some(Tok::Ident(w)) = self.peek().cloned() {
            match w.as_str() {
                "const" | "volatile" => self.at += 1,
                "struct" | "union" | "enum" => {
                    self.at += 1;
                    let name = self.ident();
                    if self.peek() == Some(&Tok::Punct('{')) {
                        if w == "enum" {
                            self.enum_body(name)?;
                            return Ok((
                                CType::Int {
                                    size: 4,
                                    signed: false,
                                },
                                false,
                            ));
                        }
                        let anonymous = name.is_none();
                        let c_name = match name {
                            Some(n) => format!("{w} {n}"),
                            None => self.anonymous_name(&w),
                        };
                        self.record_body(&w, c_name.clone())?;
                        return Ok((CType::Record(c_name), anonymous));
                    }
                    let Some(name) = name else {
                        return Err(self.error(&format!("expected a name after `{w}`")));
                    };
                    if w == "enum" {
                        return Ok((
                            CType::Int {
                                size: 4,
                                signed: false,
                            },
                            false,
                        ));
                    }
                    return Ok((CType::Record(format!("{w} {name}")), false));
                }
                "unsigned" | "signed" | "short" | "long" | "int" | "char" | "float" | "double" => {
                    words.push(w);
                    self.at += 1;
                }
                _ if words.is_empty() => {
                    self.at += 1;
                    return self.named_type(&w).map(|t| (t, false));
                }
                _ => break,
            }
        }
        if words.is_empty() {
            return Err(self.error("expected a type"));
        }
        let spelled = words.join(" ");
        match spelled.as_str() {
            "char" => return Ok((CType::Char, false)),
            "float" => return Ok((CType::Float { size: 4 }, false)),
            "double" => return Ok((CType::Float { size: 8 }, false)),
            "long double" => return Ok((CType::Float { size: 16 }, false)),
            _ => {}
        }
        match int_type(&spelled) {
            Some((size, signed)) => Ok((CType::Int { size, signed }, false)),
            None => Err(self.error(&format!("`{spelled}` is not a type weft reads"))),
        }
    }

    /// A type named by one identifier: `u32`, `bool`, or a typedef of the
    /// kernel's BTF.
    fn named_type(&self, name: &str) -> Result<CType, Box<Diagnostic>> {
        if let Some((size, signed)) = int_type(name) {
            return Ok(CType::Int { size, signed });
        }
        if name == "void" {
            return Ok(CType::Record("void".into()));
        }
        if let Some(btf) = self.btf
            && let Some(id) = btf.find(kind::TYPEDEF, name)
        {
            let target = btf.skip_aliases(id);
            return Ok(match btf.kind_of(target) {
                Some(kind::INT | kind::ENUM | kind::ENUM64) => {
                    let (size, signed) =
                        int_type(&btf.c_type(target)).unwrap_or((btf.size_of(target) as u8, false));
                    CType::Int { size, signed }
                }
                Some(kind::PTR) => CType::Pointer(btf.c_type(target)),
                Some(kind::STRUCT | kind::UNION) => CType::Record(btf.c_type(target)),
                _ => {
                    return Err(
                        self.error(&format!("the typedef `{name}` is not a type weft reads"))
                    );
                }
            });
        }
        Err(self.error(&format!("unknown type `{name}`")))
    }

    /// `*`s, a name, `[N]`s: the member's name and type. A function pointer
    /// (`(*fn)(...)`) is a pointer.
    fn declarator(&mut self, base: CType) -> Result<(String, CType), Box<Diagnostic>> {
        let mut stars = 0;
        while self.eat('*') {
            stars += 1;
            while matches!(self.peek(), Some(Tok::Ident(w)) if w == "const" || w == "volatile") {
                self.at += 1;
            }
        }
        if self.eat('(') {
            // `(*name)(params)`: a function pointer.
            self.expect('*')?;
            let name = self
                .ident()
                .ok_or_else(|| self.error("expected a member name"))?;
            self.expect(')')?;
            self.skip_parens()?;
            return Ok((name, CType::Pointer("void *".into())));
        }
        let name = self
            .ident()
            .ok_or_else(|| self.error("expected a member name"))?;
        let mut ty = base;
        if stars > 0 {
            if ty == CType::Record("void".into()) {
                ty = CType::Pointer(format!("void {}", "*".repeat(stars)));
            } else {
                let spelled = c_spelling(&ty);
                ty = CType::Pointer(format!("{spelled} {}", "*".repeat(stars)));
            }
        } else if ty == CType::Record("void".into()) {
            return Err(self.error("a member cannot be `void`"));
        }
        let mut dims = Vec::new();
        while self.eat('[') {
            let Some(Tok::Int(n)) = self.peek().cloned() else {
                return Err(self.error("expected an array length"));
            };
            self.at += 1;
            self.expect(']')?;
            dims.push(u32::try_from(n).map_err(|_| self.error("array too large"))?);
        }
        for len in dims.into_iter().rev() {
            ty = CType::Array {
                elem: Box::new(ty),
                len,
            };
        }
        Ok((name, ty))
    }

    fn skip_parens(&mut self) -> Result<(), Box<Diagnostic>> {
        self.expect('(')?;
        let mut depth = 1;
        while depth > 0 {
            match self.peek() {
                None => return Err(self.error("expected `)`")),
                Some(Tok::Punct('(')) => depth += 1,
                Some(Tok::Punct(')')) => depth -= 1,
                _ => {}
            }
            self.at += 1;
        }
        Ok(())
    }

    /// `{ A, B = 3, C }`: the enumerators, as constants, and the enum
    /// `name` (anonymous ones are named after their place) whose values
    /// print as their names.
    fn enum_body(&mut self, name: Option<String>) -> Result<(), Box<Diagnostic>> {
        self.expect('{')?;
        let enum_name = name.unwrap_or_else(|| {
            let c_name = self.anonymous_name("enum");
            c_name["enum ".len()..].to_string()
        });
        let mut variants: Vec<(String, i64)> = Vec::new();
        let mut next = 0i64;
        while !self.eat('}') {
            let name = self
                .ident()
                .ok_or_else(|| self.error("expected an enumerator"))?;
            if self.eat('=') {
                let negative = self.eat('-');
                let Some(Tok::Int(v)) = self.peek().cloned() else {
                    return Err(self.error(
                        "expected a number (enumerator values are read when they are numbers)",
                    ));
                };
                self.at += 1;
                next = if negative { -(v as i64) } else { v as i64 };
            }
            variants.push((name, next));
            next += 1;
            if !self.eat(',') {
                self.expect('}')?;
                break;
            }
        }
        let def = Arc::new(EnumDef {
            name: enum_name.clone(),
            variants: variants
                .iter()
                .map(|(n, v)| (*v as u64, n.clone()))
                .collect(),
        });
        for (n, v) in variants {
            self.types.enumerators.insert(n, (v, def.clone()));
        }
        self.types.enums.insert(enum_name, def);
        Ok(())
    }
}

/// How a member type is written in C (for the pointer types built on it).
fn c_spelling(ty: &CType) -> String {
    match ty {
        CType::Int { size, signed } => {
            format!("{}int{}", if *signed { "" } else { "u" }, size * 8)
        }
        CType::Char => "char".into(),
        CType::Pointer(p) => p.clone(),
        CType::Array { elem, .. } => c_spelling(elem),
        CType::Record(name) => name.clone(),
        CType::Float { size: 4 } => "float".into(),
        CType::Float { size: 8 } => "double".into(),
        CType::Float { .. } => "long double".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_type_names() {
        assert_eq!(int_type("int"), Some((4, true)));
        assert_eq!(int_type("unsigned int"), Some((4, false)));
        assert_eq!(int_type("const unsigned long"), Some((8, false)));
        assert_eq!(int_type("long long int"), Some((8, true)));
        assert_eq!(int_type("unsigned"), Some((4, false)));
        assert_eq!(int_type("signed char"), Some((1, true)));
        assert_eq!(int_type("unsigned char"), Some((1, false)));
        assert_eq!(int_type("short"), Some((2, true)));
        assert_eq!(int_type("u32"), Some((4, false)));
        assert_eq!(int_type("__s64"), Some((8, true)));
        assert_eq!(int_type("pid_t"), Some((4, true)));
        assert_eq!(int_type("uint64"), Some((8, false)));
        assert_eq!(int_type("struct file"), None);
        assert_eq!(int_type("void"), None);
        assert_eq!(int_type("long double"), None);
    }

    fn parse(text: &str) -> Result<ScriptTypes, String> {
        let src = format!("{text}\nBEGIN {{ }}");
        let (program, diags) = syntax::parse_text(&src, 0);
        assert!(diags.is_empty(), "{diags:?}");
        let (types, diags) = ScriptTypes::collect(&program.items, None);
        match diags.first() {
            Some(d) => Err(d.message.clone()),
            None => Ok(types),
        }
    }

    fn offsets(types: &ScriptTypes, record: &str) -> Vec<(String, u32)> {
        types
            .record(record)
            .unwrap()
            .members
            .iter()
            .map(|m| (m.name.clone(), m.offset))
            .collect()
    }

    #[test]
    fn layouts_follow_c() {
        let t = parse(
            "struct s { char c; int i; char d; long l; short h[3]; };\n\
             union u { char c; long l; int i[3]; };\n\
             struct n { struct s inner; char tail; void *p; unsigned char name[16]; int (*fn)(int, long); };",
        )
        .unwrap();
        let s = t.record("struct s").unwrap();
        assert_eq!((s.size, s.align), (32, 8));
        assert_eq!(
            offsets(&t, "struct s"),
            [
                ("c".into(), 0),
                ("i".into(), 4),
                ("d".into(), 8),
                ("l".into(), 16),
                ("h".into(), 24)
            ]
        );
        let u = t.record("union u").unwrap();
        assert_eq!((u.size, u.align), (16, 8));
        assert!(u.members.iter().all(|m| m.offset == 0));
        assert_eq!(
            offsets(&t, "struct n"),
            [
                ("inner".into(), 0),
                ("tail".into(), 32),
                ("p".into(), 40),
                ("name".into(), 48),
                ("fn".into(), 64)
            ]
        );
        assert_eq!(t.record("struct n").unwrap().size, 72);
        assert_eq!(
            t.member(t.record("struct n").unwrap(), "p").unwrap().ty,
            CType::Pointer("void *".into())
        );
    }

    #[test]
    fn packed_and_aligned_attributes() {
        let t = parse(
            "struct foo { int x; char y; int z; }\n\
             struct bar { int x; char y; int z; } /**/ __attribute__ /**/ ((packed))\n\
             struct bar2 { int x; char y; int z; } __attribute__((packed)) __attribute__((aligned(1)))\n\
             struct wide { char c; } __attribute__((__aligned__(8)));",
        )
        .unwrap();
        let size = |n: &str| t.record(n).map(|r| (r.size, r.align));
        assert_eq!(size("struct foo"), Some((12, 4)));
        assert_eq!(size("struct bar"), Some((9, 1)));
        assert_eq!(offsets(&t, "struct bar")[2], ("z".into(), 5));
        assert_eq!(size("struct bar2"), Some((9, 1)));
        assert_eq!(size("struct wide"), Some((8, 8)));
        assert!(
            parse("struct s { int x; } __attribute__((deprecated));")
                .unwrap_err()
                .contains("the attribute `deprecated` is not read")
        );
    }

    #[test]
    fn anonymous_members_and_enums() {
        let t = parse(
            "struct a { int x; union { long l; struct { int lo; int hi; }; }; int y; };\n\
             enum e { E_ZERO, E_FIVE = 5, E_SIX, E_NEG = -2 };",
        )
        .unwrap();
        let a = t.record("struct a").unwrap();
        assert_eq!(t.member(a, "hi").unwrap().offset, 12);
        assert_eq!(t.member(a, "l").unwrap().offset, 8);
        assert_eq!(t.member(a, "y").unwrap().offset, 16);
        assert_eq!(a.size, 24);
        assert_eq!(t.member_names(a), ["x", "l", "lo", "hi", "y"]);
        assert_eq!(t.enumerator("E_SIX"), Some(6));
        assert_eq!(t.enumerator("E_NEG"), Some(-2));
        assert_eq!(t.enumerator("E_ZERO"), Some(0));
    }

    /// Each bitfield's first bit and width, and each record's size and
    /// alignment, as gcc lays them out on x86-64 (measured with a C program
    /// that sets one field's bits and looks for them).
    #[test]
    fn bitfields_are_laid_out_as_gcc_lays_them_out() {
        let t = parse(
            "struct Foo { unsigned int a:4, b:8, c:3, d:1, e:16; }\n\
             struct S { char a:7; char b:3; int c; }\n\
             struct Z { int x:3; int :0; int y:2; char z; }\n\
             struct P { char a:7; char b:3; } __attribute__((packed))\n\
             struct Bar { short a:4, b:8, c:3, d:1; int e:9, f:15, g:1, h:2, i:5; }\n\
             struct M { unsigned long long a:60; unsigned char b:6; char c; }\n\
             union U { int a:3; char b; }",
        )
        .unwrap();
        let bit = |record: &str, name: &str| {
            let m = t.member(t.record(record).unwrap(), name).unwrap();
            let (shift, width) = m.bits.map_or((0, 0), |b| (b.shift, b.width));
            (m.offset * 8 + u32::from(shift), width)
        };
        let size = |n: &str| t.record(n).map(|r| (r.size, r.align));
        assert_eq!(bit("struct Foo", "c"), (12, 3));
        assert_eq!(bit("struct Foo", "e"), (16, 16));
        assert_eq!(size("struct Foo"), Some((4, 4)));
        assert_eq!(bit("struct S", "b"), (8, 3));
        assert_eq!(bit("struct S", "c"), (32, 0));
        assert_eq!(size("struct S"), Some((8, 4)));
        assert_eq!(bit("struct Z", "y"), (32, 2));
        assert_eq!(bit("struct Z", "z"), (40, 0));
        assert_eq!(size("struct Z"), Some((8, 4)));
        assert_eq!(bit("struct P", "b"), (7, 3));
        assert_eq!(size("struct P"), Some((2, 1)));
        assert_eq!(bit("struct Bar", "e"), (16, 9));
        assert_eq!(bit("struct Bar", "f"), (32, 15));
        assert_eq!(bit("struct Bar", "i"), (50, 5));
        assert_eq!(size("struct Bar"), Some((8, 4)));
        assert_eq!(bit("struct M", "b"), (64, 6));
        assert_eq!(bit("struct M", "c"), (72, 0));
        assert_eq!(size("struct M"), Some((16, 8)));
        assert_eq!(bit("union U", "a"), (0, 3));
        assert_eq!(size("union U"), Some((4, 4)));
    }

    #[test]
    fn what_is_not_read_says_so() {
        assert!(
            parse("struct b { int *x : 3; };")
                .unwrap_err()
                .contains("a bitfield has an integer type")
        );
        assert!(
            parse("struct b { char x : 9; };")
                .unwrap_err()
                .contains("a bitfield of a 1-byte type holds at most 8 bits")
        );
        assert!(
            parse("struct c { frob_t x; };")
                .unwrap_err()
                .contains("unknown type `frob_t`")
        );
        assert!(
            parse("struct d { struct load_weight load; };")
                .unwrap_err()
                .contains("`struct load_weight` is neither defined above nor known without the kernel's BTF")
        );
        assert!(
            parse("struct e { int x; int x; };")
                .unwrap_err()
                .contains("declared twice")
        );
    }

    #[test]
    fn pointees() {
        assert_eq!(pointee("int *"), Some("int"));
        assert_eq!(pointee("struct file **"), Some("struct file *"));
        assert_eq!(pointee("int"), None);
        assert_eq!(pointee("*"), None);
    }
}
