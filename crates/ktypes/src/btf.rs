//! A lazy reader of BTF (`/sys/kernel/btf/vmlinux`): the kernel's own
//! description of its types and functions.
//!
//! Format (kernel `Documentation/bpf/btf.rst`): a 24-byte header, a type
//! section of variable-length records (type id 1 is the first record; id 0
//! is `void`) and a string section of NUL-terminated names.
//!
//! [`Btf::parse`] checks the header and walks the type section once to note
//! where each record starts (4 bytes per type); nothing else is decoded until
//! asked. Function names are indexed on the first name lookup. What the
//! compiler asks for:
//!
//! - [`Btf::function`]: a kernel function's parameters and return type (fentry/fexit);
//! - [`Btf::raw_tracepoint`]: a tracepoint's raw arguments, from the
//!   `btf_trace_<name>` typedef (its first parameter, the `void *` data, dropped);
//! - [`Btf::member`]: a struct member's offset and type, for `->field`.

mod c_decl;

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::KernelInfoError;
use crate::tracepoint_format::{FieldKind, TpField, TracepointFormat};

/// BTF type kinds (`BTF_KIND_*`).
pub mod kind {
    pub const INT: u32 = 1;
    pub const PTR: u32 = 2;
    pub const ARRAY: u32 = 3;
    pub const STRUCT: u32 = 4;
    pub const UNION: u32 = 5;
    pub const ENUM: u32 = 6;
    pub const FWD: u32 = 7;
    pub const TYPEDEF: u32 = 8;
    pub const VOLATILE: u32 = 9;
    pub const CONST: u32 = 10;
    pub const RESTRICT: u32 = 11;
    pub const FUNC: u32 = 12;
    pub const FUNC_PROTO: u32 = 13;
    pub const VAR: u32 = 14;
    pub const DATASEC: u32 = 15;
    pub const FLOAT: u32 = 16;
    pub const DECL_TAG: u32 = 17;
    pub const TYPE_TAG: u32 = 18;
    pub const ENUM64: u32 = 19;
}

const MAGIC: u16 = 0xeb9f;
const HEADER_LEN: usize = 24;
/// Modifier chains and typedef chains are short; this bounds malformed cycles.
const MAX_CHAIN: usize = 32;

/// One record of the type section, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BtfType {
    pub name_off: u32,
    pub kind: u32,
    pub vlen: u32,
    pub kind_flag: bool,
    /// `size` for INT, STRUCT, UNION, ENUM, FLOAT, DATASEC; `type` for the others.
    pub size_or_type: u32,
    /// Byte offset of the record in the type section.
    offset: usize,
}

/// A parameter or return value of a function, as the compiler sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtfParam {
    /// The parameter's name (`retval` for the return value).
    pub name: String,
    /// The type in C spelling (`struct file *`, `size_t`).
    pub c_type: String,
    /// The type id, for following pointers to structs.
    pub type_id: u32,
    /// Bytes of the value once typedefs and qualifiers are peeled (8 for pointers).
    pub size: u32,
    pub signed: bool,
    pub pointer: bool,
}

/// A function's parameters (in order) and return value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtfFunction {
    pub name: String,
    pub params: Vec<BtfParam>,
    /// `None` for `void` functions.
    pub ret: Option<BtfParam>,
}

impl BtfFunction {
    /// The parameters as fields of an array of u64: parameter `i` at offset
    /// `8 * i`, the way fentry, tp_btf and raw_tp programs see them.
    pub fn args_format(&self) -> TracepointFormat {
        TracepointFormat {
            name: self.name.clone(),
            id: 0,
            fields: self
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| p.field(8 * i as u32))
                .collect(),
            common_fields: Vec::new(),
        }
    }
}

impl BtfParam {
    /// This value as a record field at `offset`.
    pub fn field(&self, offset: u32) -> TpField {
        TpField {
            name: self.name.clone(),
            c_type: self.c_type.clone(),
            offset,
            size: if matches!(self.size, 1 | 2 | 4 | 8) {
                self.size
            } else {
                8
            },
            signed: self.signed,
            kind: if self.pointer {
                FieldKind::Pointer
            } else {
                FieldKind::Int
            },
        }
    }
}

/// A member of a struct or union.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtfMember {
    pub name: String,
    pub type_id: u32,
    /// Offset from the start of the struct, in bits.
    pub bit_offset: u32,
    /// Non-zero for bitfields.
    pub bitfield_size: u32,
}

/// A parsed BTF blob (owns its bytes).
pub struct Btf {
    data: Vec<u8>,
    type_start: usize,
    type_len: usize,
    str_start: usize,
    str_len: usize,
    /// Offset of each type record in the type section; index 0 is type id 1.
    offsets: Vec<u32>,
    /// FUNC and TYPEDEF names to type ids, built on the first lookup.
    names: OnceLock<HashMap<(u32, Box<str>), u32>>,
    /// Enumerator names to values and the ids of their enums
    /// (`TCP_ESTABLISHED` → 1), built on the first lookup.
    enumerators: OnceLock<HashMap<Box<str>, (i64, u32)>>,
}

impl std::fmt::Debug for Btf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Btf")
            .field("bytes", &self.data.len())
            .field("types", &self.offsets.len())
            .finish()
    }
}

fn malformed(what: impl Into<String>) -> KernelInfoError {
    KernelInfoError::Malformed(format!("BTF: {}", what.into()))
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    data.get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl Btf {
    /// Checks the header and indexes the type records. Little-endian BTF only
    /// (the byte order of every kernel weft runs on).
    pub fn parse(data: Vec<u8>) -> Result<Btf, KernelInfoError> {
        if data.len() < HEADER_LEN {
            return Err(malformed("shorter than its header"));
        }
        let magic = u16::from_le_bytes([data[0], data[1]]);
        if magic != MAGIC {
            return Err(malformed(format!(
                "bad magic {magic:#06x} (big-endian BTF is not supported)"
            )));
        }
        let hdr_len = u32_at(&data, 4).unwrap_or(0) as usize;
        let field = |i: usize| u32_at(&data, 8 + 4 * i).unwrap_or(0) as usize;
        let (type_off, type_len, str_off, str_len) = (field(0), field(1), field(2), field(3));
        if hdr_len < HEADER_LEN {
            return Err(malformed("header too short"));
        }
        let type_start = hdr_len
            .checked_add(type_off)
            .ok_or_else(|| malformed("type section out of range"))?;
        let str_start = hdr_len
            .checked_add(str_off)
            .ok_or_else(|| malformed("string section out of range"))?;
        if type_start
            .checked_add(type_len)
            .is_none_or(|end| end > data.len())
            || str_start
                .checked_add(str_len)
                .is_none_or(|end| end > data.len())
        {
            return Err(malformed("sections extend past the end of the data"));
        }
        let mut btf = Btf {
            data,
            type_start,
            type_len,
            str_start,
            str_len,
            offsets: Vec::new(),
            names: OnceLock::new(),
            enumerators: OnceLock::new(),
        };
        btf.index()?;
        Ok(btf)
    }

    /// Walks the type section once, noting where each record starts.
    fn index(&mut self) -> Result<(), KernelInfoError> {
        let section = &self.data[self.type_start..self.type_start + self.type_len];
        let mut offsets = Vec::with_capacity(self.type_len / 16);
        let mut at = 0usize;
        while at < section.len() {
            let info = u32_at(section, at + 4).ok_or_else(|| malformed("truncated type"))?;
            let vlen = (info & 0xffff) as usize;
            let extra = match (info >> 24) & 0x1f {
                kind::INT | kind::VAR | kind::DECL_TAG => 4,
                kind::PTR
                | kind::FWD
                | kind::TYPEDEF
                | kind::VOLATILE
                | kind::CONST
                | kind::RESTRICT
                | kind::FUNC
                | kind::FLOAT
                | kind::TYPE_TAG => 0,
                kind::ARRAY => 12,
                kind::STRUCT | kind::UNION | kind::DATASEC | kind::ENUM64 => 12 * vlen,
                kind::ENUM | kind::FUNC_PROTO => 8 * vlen,
                k => return Err(malformed(format!("unknown type kind {k}"))),
            };
            offsets.push(at as u32);
            at += 12 + extra;
        }
        if at != section.len() {
            return Err(malformed("truncated type section"));
        }
        self.offsets = offsets;
        Ok(())
    }

    /// Number of types (not counting `void`).
    pub fn len(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    fn section_u32(&self, at: usize) -> u32 {
        u32_at(&self.data, self.type_start + at).unwrap_or(0)
    }

    /// The type with this id (`None` for `void` and for ids out of range).
    pub fn type_by_id(&self, id: u32) -> Option<BtfType> {
        let offset = *self.offsets.get((id as usize).checked_sub(1)?)? as usize;
        let info = self.section_u32(offset + 4);
        Some(BtfType {
            name_off: self.section_u32(offset),
            kind: (info >> 24) & 0x1f,
            vlen: info & 0xffff,
            kind_flag: info >> 31 == 1,
            size_or_type: self.section_u32(offset + 8),
            offset,
        })
    }

    /// A string of the string section (empty if out of range).
    pub fn string(&self, off: u32) -> &str {
        let off = off as usize;
        if off >= self.str_len {
            return "";
        }
        let bytes = &self.data[self.str_start + off..self.str_start + self.str_len];
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        std::str::from_utf8(&bytes[..end]).unwrap_or("")
    }

    pub fn name(&self, t: &BtfType) -> &str {
        self.string(t.name_off)
    }

    /// The `i`th `(u32, u32)` pair after a record's fixed part (params, enum values).
    fn pair(&self, t: &BtfType, i: u32) -> (u32, u32) {
        let at = t.offset + 12 + 8 * i as usize;
        (self.section_u32(at), self.section_u32(at + 4))
    }

    fn names(&self) -> &HashMap<(u32, Box<str>), u32> {
        self.names.get_or_init(|| {
            let mut map = HashMap::new();
            for id in 1..=self.offsets.len() as u32 {
                let Some(t) = self.type_by_id(id) else {
                    continue;
                };
                if matches!(
                    t.kind,
                    kind::FUNC | kind::TYPEDEF | kind::STRUCT | kind::UNION
                ) {
                    let name = self.name(&t);
                    if !name.is_empty() {
                        map.entry((t.kind, name.into())).or_insert(id);
                    }
                }
            }
            map
        })
    }

    /// The first type of `kind` (FUNC, TYPEDEF, STRUCT or UNION) named `name`.
    /// One scan of the records, unless a listing already built the name index.
    pub fn find(&self, kind: u32, name: &str) -> Option<u32> {
        if let Some(names) = self.names.get() {
            return names.get(&(kind, Box::from(name))).copied();
        }
        (1..=self.offsets.len() as u32).find(|&id| {
            self.type_by_id(id)
                .is_some_and(|t| t.kind == kind && self.name(&t) == name)
        })
    }

    /// The per-CPU variable `name` (a VAR of the `.data..percpu` DATASEC,
    /// where pahole puts the kernel's `DEFINE_PER_CPU` variables): its
    /// VAR's id and the id of its type.
    pub fn percpu_var(&self, name: &str) -> Option<(u32, u32)> {
        let var = self.find(kind::VAR, name)?;
        let section = self.type_by_id(self.find(kind::DATASEC, ".data..percpu")?)?;
        let listed = (0..section.vlen as usize)
            .any(|i| self.section_u32(section.offset + 12 + 12 * i) == var);
        listed.then(|| Some((var, self.type_by_id(var)?.size_or_type)))?
    }

    /// The value of the enumerator `name` of any enum (`TCP_FIN_WAIT1`,
    /// `SKB_DROP_REASON_NOT_SPECIFIED`), as C would see it; the first wins
    /// if two enums reuse a name.
    pub fn enum_value(&self, name: &str) -> Option<i64> {
        self.enumerator(name).map(|(value, _)| value)
    }

    /// The value of the enumerator `name` (as [`Btf::enum_value`]) and the
    /// id of the enum type that defines it.
    pub fn enumerator(&self, name: &str) -> Option<(i64, u32)> {
        self.enumerators
            .get_or_init(|| {
                let mut map = HashMap::new();
                for id in 1..=self.offsets.len() as u32 {
                    let Some(t) = self.type_by_id(id) else {
                        continue;
                    };
                    let signed = t.kind_flag;
                    for i in 0..t.vlen {
                        let (name_off, value) = match t.kind {
                            kind::ENUM => {
                                let (n, v) = self.pair(&t, i);
                                (n, if signed { v as i32 as i64 } else { v as i64 })
                            }
                            kind::ENUM64 => {
                                let at = t.offset + 12 + 12 * i as usize;
                                let lo = self.section_u32(at + 4) as u64;
                                let hi = self.section_u32(at + 8) as u64;
                                (self.section_u32(at), ((hi << 32) | lo) as i64)
                            }
                            _ => break,
                        };
                        let name = self.string(name_off);
                        if !name.is_empty() {
                            map.entry(name.into()).or_insert((value, id));
                        }
                    }
                }
                map
            })
            .get(name)
            .copied()
    }

    /// The enumerators of the enum type `id` (ENUM or ENUM64): each value,
    /// as the unsigned bits of the enum's width, and name, in BTF's order.
    pub fn enum_variants(&self, id: u32) -> Vec<(u64, String)> {
        let Some(t) = self.type_by_id(id) else {
            return Vec::new();
        };
        let mask = match t.size_or_type {
            1..=7 => (1u64 << (t.size_or_type * 8)) - 1,
            _ => u64::MAX,
        };
        (0..t.vlen)
            .map_while(|i| {
                let (name_off, value) = match t.kind {
                    kind::ENUM => {
                        let (n, v) = self.pair(&t, i);
                        (n, u64::from(v))
                    }
                    kind::ENUM64 => {
                        let at = t.offset + 12 + 12 * i as usize;
                        let lo = self.section_u32(at + 4) as u64;
                        let hi = self.section_u32(at + 8) as u64;
                        (self.section_u32(at), (hi << 32) | lo)
                    }
                    _ => return None,
                };
                Some((value & mask, self.string(name_off).to_string()))
            })
            .collect()
    }

    /// Names of every type of `kind` (FUNC, TYPEDEF, STRUCT or UNION), sorted, without duplicates.
    pub fn names_of(&self, kind: u32) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .names()
            .keys()
            .filter(|(k, _)| *k == kind)
            .map(|(_, n)| &**n)
            .collect();
        v.sort_unstable();
        v
    }

    /// Follows typedefs and qualifiers (const, volatile, restrict, type tags).
    pub fn skip_aliases(&self, mut id: u32) -> u32 {
        for _ in 0..MAX_CHAIN {
            match self.type_by_id(id) {
                Some(t)
                    if matches!(
                        t.kind,
                        kind::TYPEDEF
                            | kind::VOLATILE
                            | kind::CONST
                            | kind::RESTRICT
                            | kind::TYPE_TAG
                    ) =>
                {
                    id = t.size_or_type
                }
                _ => return id,
            }
        }
        id
    }

    /// The type spelled as C does, without a name: `struct file *`,
    /// `const char *`, `size_t`, `void`.
    pub fn c_type(&self, id: u32) -> String {
        self.c_type_depth(id, 0)
    }

    fn c_type_depth(&self, id: u32, depth: usize) -> String {
        if depth > MAX_CHAIN {
            return "?".into();
        }
        let Some(t) = self.type_by_id(id) else {
            return "void".into();
        };
        let name = self.name(&t);
        match t.kind {
            kind::INT | kind::TYPEDEF | kind::FLOAT => name.to_string(),
            kind::STRUCT => format!("struct {name}"),
            kind::UNION => format!("union {name}"),
            kind::ENUM | kind::ENUM64 => format!("enum {name}"),
            kind::FWD if t.kind_flag => format!("union {name}"),
            kind::FWD => format!("struct {name}"),
            kind::PTR => match self.type_by_id(t.size_or_type) {
                Some(p) if p.kind == kind::FUNC_PROTO => "void *".into(),
                _ => format!("{} *", self.c_type_depth(t.size_or_type, depth + 1)),
            },
            kind::CONST => format!("const {}", self.c_type_depth(t.size_or_type, depth + 1)),
            kind::VOLATILE => format!("volatile {}", self.c_type_depth(t.size_or_type, depth + 1)),
            kind::RESTRICT | kind::TYPE_TAG => self.c_type_depth(t.size_or_type, depth + 1),
            kind::ARRAY => {
                let elem = self.section_u32(t.offset + 12);
                let n = self.section_u32(t.offset + 20);
                format!("{}[{n}]", self.c_type_depth(elem, depth + 1))
            }
            _ => name.to_string(),
        }
    }

    /// Size in bytes of a type, after aliases (8 for pointers, 0 for `void`).
    pub fn size_of(&self, id: u32) -> u32 {
        let Some(t) = self.type_by_id(self.skip_aliases(id)) else {
            return 0;
        };
        match t.kind {
            kind::PTR => 8,
            kind::INT | kind::STRUCT | kind::UNION | kind::ENUM | kind::ENUM64 | kind::FLOAT => {
                t.size_or_type
            }
            kind::ARRAY => {
                let elem = self.section_u32(t.offset + 12);
                let n = self.section_u32(t.offset + 20);
                self.size_of(elem).saturating_mul(n)
            }
            _ => 0,
        }
    }

    /// A value of type `id` named `name`.
    fn param(&self, name: &str, id: u32) -> BtfParam {
        let base = self.type_by_id(self.skip_aliases(id));
        let pointer = base.is_some_and(|t| t.kind == kind::PTR);
        let signed = match base {
            Some(t) if t.kind == kind::INT => (self.section_u32(t.offset + 12) >> 24) & 1 == 1,
            Some(t) if t.kind == kind::ENUM || t.kind == kind::ENUM64 => t.kind_flag,
            _ => false,
        };
        BtfParam {
            name: name.to_string(),
            c_type: self.c_type(id),
            type_id: id,
            size: self.size_of(id),
            signed,
            pointer,
        }
    }

    /// The parameters and return value of a FUNC_PROTO.
    fn proto(&self, name: &str, proto: u32) -> Option<BtfFunction> {
        let p = self.type_by_id(proto)?;
        if p.kind != kind::FUNC_PROTO {
            return None;
        }
        let params = (0..p.vlen)
            .map(|i| self.pair(&p, i))
            // A trailing (0, 0) parameter marks a variadic function.
            .filter(|&(name_off, ty)| !(name_off == 0 && ty == 0))
            .enumerate()
            .map(|(i, (name_off, ty))| {
                let n = self.string(name_off);
                let n = if n.is_empty() {
                    format!("arg{i}")
                } else {
                    n.to_string()
                };
                self.param(&n, ty)
            })
            .collect();
        let ret = (p.size_or_type != 0).then(|| self.param("retval", p.size_or_type));
        Some(BtfFunction {
            name: name.to_string(),
            params,
            ret,
        })
    }

    /// A kernel function (a FUNC) by name.
    pub fn function(&self, name: &str) -> Option<BtfFunction> {
        let f = self.type_by_id(self.find(kind::FUNC, name)?)?;
        self.proto(name, f.size_or_type)
    }

    /// The raw arguments of tracepoint `name`: the `btf_trace_<name>` typedef
    /// is a pointer to a FUNC_PROTO whose first parameter is the probe's
    /// `void *` data, which programs never see.
    ///
    /// The typedef's prototype has no parameter names; the kernel's
    /// `__bpf_trace_<name>` function has the same parameters with names, so
    /// it is preferred when present. Unnamed parameters are `argN`.
    pub fn raw_tracepoint(&self, name: &str) -> Option<BtfFunction> {
        let named = self
            .find(kind::FUNC, &format!("__bpf_trace_{name}"))
            .and_then(|id| self.type_by_id(id));
        let mut f = match named {
            Some(func) => self.proto(name, func.size_or_type)?,
            None => {
                let td =
                    self.type_by_id(self.find(kind::TYPEDEF, &format!("btf_trace_{name}"))?)?;
                let ptr = self.type_by_id(td.size_or_type)?;
                if ptr.kind != kind::PTR {
                    return None;
                }
                self.proto(name, ptr.size_or_type)?
            }
        };
        if !f.params.is_empty() {
            f.params.remove(0);
        }
        for (i, p) in f.params.iter_mut().enumerate() {
            if p.name.starts_with("arg") && p.name[3..].bytes().all(|b| b.is_ascii_digit()) {
                p.name = format!("arg{i}");
            }
        }
        f.ret = None;
        Some(f)
    }

    /// Every raw tracepoint named by a `btf_trace_*` typedef, sorted.
    pub fn raw_tracepoint_names(&self) -> Vec<&str> {
        self.names_of(kind::TYPEDEF)
            .into_iter()
            .filter_map(|n| n.strip_prefix("btf_trace_"))
            .collect()
    }

    /// A member of the struct or union `id` (after aliases) by name, looking
    /// into anonymous members; offsets are from the start of `id`.
    pub fn member(&self, id: u32, name: &str) -> Option<BtfMember> {
        self.member_depth(id, name, 0)
    }

    fn member_depth(&self, id: u32, name: &str, depth: usize) -> Option<BtfMember> {
        if depth > MAX_CHAIN {
            return None;
        }
        let t = self.type_by_id(self.skip_aliases(id))?;
        if !matches!(t.kind, kind::STRUCT | kind::UNION) {
            return None;
        }
        for i in 0..t.vlen {
            let at = t.offset + 12 + 12 * i as usize;
            let (name_off, ty, off) = (
                self.section_u32(at),
                self.section_u32(at + 4),
                self.section_u32(at + 8),
            );
            let (bit_offset, bitfield_size) = if t.kind_flag {
                (off & 0x00ff_ffff, off >> 24)
            } else {
                (off, 0)
            };
            let member_name = self.string(name_off);
            if member_name == name {
                return Some(BtfMember {
                    name: name.to_string(),
                    type_id: ty,
                    bit_offset,
                    bitfield_size,
                });
            }
            if member_name.is_empty()
                && let Some(mut m) = self.member_depth(ty, name, depth + 1)
            {
                m.bit_offset += bit_offset;
                return Some(m);
            }
        }
        None
    }

    /// The struct a pointer type points to (after aliases), if it does.
    pub fn pointee_struct(&self, ptr: u32) -> Option<u32> {
        let p = self.type_by_id(self.skip_aliases(ptr))?;
        if p.kind != kind::PTR {
            return None;
        }
        let target = self.skip_aliases(p.size_or_type);
        let t = self.type_by_id(target)?;
        matches!(t.kind, kind::STRUCT | kind::UNION).then_some(target)
    }

    /// A type as a value (an array's element): its C type, size and sign.
    pub fn value_param(&self, id: u32) -> BtfParam {
        self.param("", id)
    }

    /// A member as a value (for `ptr->name`): its C type, size and sign.
    pub fn member_param(&self, m: &BtfMember) -> BtfParam {
        self.param(&m.name, m.type_id)
    }

    /// The names a `->`/`.` on struct or union `id` may use, the members of
    /// anonymous members included, in declaration order (for "did you mean").
    pub fn member_names(&self, id: u32) -> Vec<&str> {
        let mut out = Vec::new();
        self.member_names_depth(id, 0, &mut out);
        out
    }

    fn member_names_depth<'a>(&'a self, id: u32, depth: usize, out: &mut Vec<&'a str>) {
        if depth > MAX_CHAIN {
            return;
        }
        let Some(t) = self.type_by_id(self.skip_aliases(id)) else {
            return;
        };
        if !matches!(t.kind, kind::STRUCT | kind::UNION) {
            return;
        }
        for i in 0..t.vlen {
            let at = t.offset + 12 + 12 * i as usize;
            let name = self.string(self.section_u32(at));
            if name.is_empty() {
                self.member_names_depth(self.section_u32(at + 4), depth + 1, out);
            } else {
                out.push(name);
            }
        }
    }

    /// The element type and length of an array type (after aliases).
    pub fn array(&self, id: u32) -> Option<(u32, u32)> {
        let t = self.type_by_id(self.skip_aliases(id))?;
        (t.kind == kind::ARRAY).then(|| {
            (
                self.section_u32(t.offset + 12),
                self.section_u32(t.offset + 20),
            )
        })
    }

    /// The kind of a type after aliases (`None` for `void`).
    pub fn kind_of(&self, id: u32) -> Option<u32> {
        self.type_by_id(self.skip_aliases(id)).map(|t| t.kind)
    }
}

/// Builds BTF blobs for tests and fixtures: add types in id order, then [`BtfBuilder::build`].
#[derive(Debug, Default, Clone)]
pub struct BtfBuilder {
    types: Vec<u8>,
    strings: Vec<u8>,
    next_id: u32,
}

impl BtfBuilder {
    pub fn new() -> BtfBuilder {
        BtfBuilder {
            types: Vec::new(),
            strings: vec![0],
            next_id: 1,
        }
    }

    fn str(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return 0;
        }
        let off = self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        off
    }

    fn record(&mut self, name: &str, kind: u32, vlen: u32, flag: bool, size_or_type: u32) -> u32 {
        let name_off = self.str(name);
        let info = (kind << 24) | (vlen & 0xffff) | (u32::from(flag) << 31);
        for w in [name_off, info, size_or_type] {
            self.types.extend_from_slice(&w.to_le_bytes());
        }
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn words(&mut self, ws: &[u32]) {
        for w in ws {
            self.types.extend_from_slice(&w.to_le_bytes());
        }
    }

    /// An integer of `size` bytes.
    pub fn int(&mut self, name: &str, size: u32, signed: bool) -> u32 {
        let id = self.record(name, kind::INT, 0, false, size);
        self.words(&[(u32::from(signed) << 24) | (size * 8)]);
        id
    }

    pub fn ptr(&mut self, to: u32) -> u32 {
        self.record("", kind::PTR, 0, false, to)
    }

    pub fn typedef(&mut self, name: &str, to: u32) -> u32 {
        self.record(name, kind::TYPEDEF, 0, false, to)
    }

    pub fn konst(&mut self, to: u32) -> u32 {
        self.record("", kind::CONST, 0, false, to)
    }

    /// A struct with `(name, type, byte offset)` members.
    pub fn structure(&mut self, name: &str, size: u32, members: &[(&str, u32, u32)]) -> u32 {
        let id = self.record(name, kind::STRUCT, members.len() as u32, false, size);
        for (n, ty, off) in members {
            let n = self.str(n);
            self.words(&[n, *ty, off * 8]);
        }
        id
    }

    /// A union with `(name, type, byte offset)` members (an empty name is an anonymous member).
    pub fn union(&mut self, name: &str, size: u32, members: &[(&str, u32, u32)]) -> u32 {
        let id = self.record(name, kind::UNION, members.len() as u32, false, size);
        for (n, ty, off) in members {
            let n = self.str(n);
            self.words(&[n, *ty, off * 8]);
        }
        id
    }

    /// An enum of `size` bytes with these enumerators.
    pub fn enumeration(&mut self, name: &str, size: u32, values: &[(&str, i64)]) -> u32 {
        let signed = values.iter().any(|&(_, v)| v < 0);
        let id = self.record(name, kind::ENUM, values.len() as u32, signed, size);
        for (n, v) in values {
            let n = self.str(n);
            self.words(&[n, *v as u32]);
        }
        id
    }

    /// A struct whose members are `(name, type, bit offset, bitfield bits)`
    /// (bits 0 for an ordinary member), encoded with `kind_flag` set.
    pub fn structure_bits(
        &mut self,
        name: &str,
        size: u32,
        members: &[(&str, u32, u32, u32)],
    ) -> u32 {
        let id = self.record(name, kind::STRUCT, members.len() as u32, true, size);
        for (n, ty, bit_off, bits) in members {
            let n = self.str(n);
            self.words(&[n, *ty, (bits << 24) | (bit_off & 0x00ff_ffff)]);
        }
        id
    }

    /// An array of `len` elements of type `elem`, indexed by `index`.
    pub fn array(&mut self, elem: u32, index: u32, len: u32) -> u32 {
        let id = self.record("", kind::ARRAY, 0, false, 0);
        self.words(&[elem, index, len]);
        id
    }

    /// A global variable of type `ty` (a VAR).
    pub fn var(&mut self, name: &str, ty: u32) -> u32 {
        let id = self.record(name, kind::VAR, 0, false, ty);
        self.words(&[1]);
        id
    }

    /// A data section listing `(VAR id, offset, size)`.
    pub fn datasec(&mut self, name: &str, size: u32, vars: &[(u32, u32, u32)]) -> u32 {
        let id = self.record(name, kind::DATASEC, vars.len() as u32, false, size);
        for (var, off, len) in vars {
            self.words(&[*var, *off, *len]);
        }
        id
    }

    /// The id the next type added will get (for members that refer to a
    /// type declared later, as BTF allows).
    pub fn next_id(&self) -> u32 {
        self.next_id
    }

    /// A FUNC_PROTO returning `ret` (0 for void) with `(name, type)` parameters.
    pub fn proto(&mut self, ret: u32, params: &[(&str, u32)]) -> u32 {
        let id = self.record("", kind::FUNC_PROTO, params.len() as u32, false, ret);
        for (n, ty) in params {
            let n = self.str(n);
            self.words(&[n, *ty]);
        }
        id
    }

    /// A global FUNC of prototype `proto`.
    pub fn func(&mut self, name: &str, proto: u32) -> u32 {
        self.record(name, kind::FUNC, 1, false, proto)
    }

    /// The blob: header, types, strings.
    pub fn build(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.push(1);
        out.push(0);
        let type_len = self.types.len() as u32;
        for w in [
            HEADER_LEN as u32,
            0,
            type_len,
            type_len,
            self.strings.len() as u32,
        ] {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&self.types);
        out.extend_from_slice(&self.strings);
        out
    }
}

/// A small kernel's worth of BTF for tests: `vfs_read`, `do_sys_openat2`,
/// `struct file`/`struct path`, and the `sys_enter` and `sched_switch` raw
/// tracepoints, with the types the 6.x kernel gives them.
pub fn fixture_btf() -> Vec<u8> {
    let mut b = BtfBuilder::new();
    let int = b.int("int", 4, true);
    let long = b.int("long int", 8, true);
    let ulong = b.int("long unsigned int", 8, false);
    let longlong = b.int("long long int", 8, true);
    let uint = b.int("unsigned int", 4, false);
    let char_ = b.int("char", 1, true);
    let bool_ = b.int("_Bool", 1, false);
    let size_t = b.typedef("size_t", ulong);
    let ssize_t = b.typedef("ssize_t", long);
    let loff_t = b.typedef("loff_t", longlong);
    let pid_t = b.typedef("pid_t", int);
    let char_ptr = b.ptr(char_);
    let const_char = b.konst(char_);
    let const_char_ptr = b.ptr(const_char);
    let loff_ptr = b.ptr(loff_t);
    let inode = b.structure("inode", 600, &[("i_ino", ulong, 64)]);
    let inode_ptr = b.ptr(inode);
    // struct qstr { union { struct { u32 hash; u32 len; }; u64 hash_len; }; const unsigned char *name; }
    let uchar = b.int("unsigned char", 1, false);
    let const_uchar = b.konst(uchar);
    let const_uchar_ptr = b.ptr(const_uchar);
    let hash_len = b.structure("", 8, &[("hash", uint, 0), ("len", uint, 4)]);
    let hash_union = b.union("", 8, &[("", hash_len, 0), ("hash_len", ulong, 0)]);
    let qstr = b.structure(
        "qstr",
        16,
        &[("", hash_union, 0), ("name", const_uchar_ptr, 8)],
    );
    let dentry = b.structure(
        "dentry",
        200,
        &[("d_name", qstr, 32), ("d_inode", inode_ptr, 48)],
    );
    let dentry_ptr = b.ptr(dentry);
    let path = b.structure("path", 16, &[("mnt", ulong, 0), ("dentry", dentry_ptr, 8)]);
    let file = b.structure(
        "file",
        232,
        &[
            ("f_mode", uint, 20),
            ("f_path", path, 64),
            ("f_pos", loff_t, 152),
        ],
    );
    let file_ptr = b.ptr(file);
    let read = b.proto(
        ssize_t,
        &[
            ("file", file_ptr),
            ("buf", char_ptr),
            ("count", size_t),
            ("pos", loff_ptr),
        ],
    );
    b.func("vfs_read", read);
    let open_how = b.structure("open_how", 24, &[("flags", ulong, 0)]);
    let open_how_ptr = b.ptr(open_how);
    let openat2 = b.proto(
        long,
        &[
            ("dfd", int),
            ("filename", const_char_ptr),
            ("how", open_how_ptr),
        ],
    );
    b.func("do_sys_openat2", openat2);
    let void_ptr = b.ptr(0);
    let comm = b.array(char_, int, 16);
    // `in_iowait` is a 1-bit bitfield, as in the kernel.
    let task = b.structure_bits(
        "task_struct",
        9000,
        &[
            ("in_iowait", uint, 1000 * 8 + 3, 1),
            ("pid", pid_t, 2000 * 8, 0),
            ("tgid", pid_t, 2004 * 8, 0),
            ("comm", comm, 3000 * 8, 0),
        ],
    );
    let task_ptr = b.ptr(task);
    let pt_regs = b.structure("pt_regs", 168, &[("di", ulong, 112)]);
    let regs_ptr = b.ptr(pt_regs);
    let enter = b.proto(0, &[("__data", void_ptr), ("regs", regs_ptr), ("id", long)]);
    let enter_ptr = b.ptr(enter);
    b.typedef("btf_trace_sys_enter", enter_ptr);
    let switch = b.proto(
        0,
        &[
            ("__data", void_ptr),
            ("preempt", bool_),
            ("prev", task_ptr),
            ("next", task_ptr),
            ("prev_state", uint),
        ],
    );
    let switch_ptr = b.ptr(switch);
    b.typedef("btf_trace_sched_switch", switch_ptr);
    let ushort = b.int("unsigned short", 2, false);
    let be16 = b.typedef("__be16", ushort);
    let be32 = b.typedef("__be32", uint);
    let in_addr = b.structure("in_addr", 4, &[("s_addr", be32, 0)]);
    b.structure(
        "sockaddr_in",
        16,
        &[
            ("sin_family", ushort, 0),
            ("sin_port", be16, 2),
            ("sin_addr", in_addr, 4),
        ],
    );
    b.enumeration(
        "",
        4,
        &[
            ("TCP_ESTABLISHED", 1),
            ("TCP_SYN_SENT", 2),
            ("TCP_FIN_WAIT1", 4),
        ],
    );
    b.enumeration("weft_signed", 4, &[("WEFT_BELOW_ZERO", -3)]);
    // The numeric iterator kfuncs a range loop calls (Linux 6.4 and later).
    let iter_num = b.structure("bpf_iter_num", 8, &[]);
    let iter_ptr = b.ptr(iter_num);
    let int_ptr = b.ptr(int);
    let iter_new = b.proto(int, &[("it", iter_ptr), ("start", int), ("end", int)]);
    b.func("bpf_iter_num_new", iter_new);
    let iter_next = b.proto(int_ptr, &[("it", iter_ptr)]);
    b.func("bpf_iter_num_next", iter_next);
    let iter_destroy = b.proto(0, &[("it", iter_ptr)]);
    b.func("bpf_iter_num_destroy", iter_destroy);
    // The element count `len(@m)` reads (Linux 6.6 and later).
    let bpf_map = b.structure("bpf_map", 8, &[]);
    let map_ptr = b.ptr(bpf_map);
    let elem_count = b.proto(long, &[("map", map_ptr)]);
    b.func("bpf_map_sum_elem_count", elem_count);
    // The helper ids sema looks for (a map loop needs bpf_for_each_map_elem).
    b.enumeration(
        "bpf_func_id",
        4,
        &[("BPF_FUNC_unspec", 0), ("BPF_FUNC_for_each_map_elem", 164)],
    );
    // Per-CPU variables, as pahole lists them: VARs of `.data..percpu`.
    let rq = b.structure("rq", 3584, &[("nr_running", uint, 4)]);
    let runqueues = b.var("runqueues", rq);
    let process_counts = b.var("process_counts", ulong);
    b.datasec(
        ".data..percpu",
        202520,
        &[(process_counts, 97648, 8), (runqueues, 195776, 3584)],
    );
    // A global that is not per-CPU.
    b.var("jiffies_64", ulong);
    b.build()
}
