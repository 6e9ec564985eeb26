//! C values held by value, as bpftrace's current dialect holds them: the
//! element types of arrays (`int x[4]`, `int y[2][2]`, `struct W w[10]`)
//! and the layout of a struct or union copied into a variable, map or tuple
//! (`$s = *p`, `@s[*p]`), a record at the C offsets that prints as
//! `{ .m = 2, .n = 3 }` (a bitfield as the unsigned integer its bits hold).
//! A struct weft cannot lay out (a member type it does not read) keeps no layout and is not storable; `.member`
//! through a pointer still reads it.

use abi::{Layout, NamedField};
use ktypes::Btf;
use ktypes::btf::kind;

use super::Checker;
use super::members::{struct_c_type, struct_named};
use crate::ctypes::{Bits, CType};
use crate::types::Type;

/// How a bitfield held in a struct value is read back (`None` for one no
/// 8 bytes hold).
fn bits_layout(bits: Bits) -> Option<Layout> {
    match bits.window() {
        0 => None,
        size => Some(Layout::Bits {
            size,
            shift: bits.shift,
            width: bits.width,
        }),
    }
}

/// Structs inside structs (and arrays of them) deeper than this are not laid out.
const MAX_DEPTH: usize = 8;

/// A struct held by value larger than this has no layout: a BPF value
/// lives on the 512-byte stack or in a map value, and nobody prints one.
const MAX_VALUE_SIZE: u32 = 4096;

impl Checker<'_> {
    /// The type of a struct or union by C name, with its layout if weft
    /// can hold it by value.
    pub(super) fn struct_type(&self, c_type: String) -> Type {
        let layout = self.struct_layout(&c_type, 0).map(Box::new);
        Type::Struct { c_type, layout }
    }

    fn struct_layout(&self, c_type: &str, depth: usize) -> Option<Layout> {
        if depth > MAX_DEPTH {
            return None;
        }
        if let Some(types) = self.script_types
            && let Some(record) = types.record(c_type)
        {
            let mut fields = Vec::new();
            for name in types.member_names(record) {
                let found = types.member(record, name)?;
                let layout = match (&found.ty, found.bits) {
                    (_, Some(bits)) => bits_layout(bits)?,
                    // Printed `null`, as bpftrace prints what it cannot read.
                    (CType::Float { .. }, None) => Layout::None,
                    (ty, None) => self.script_value_type(ty, depth + 1)?.layout(),
                };
                fields.push(NamedField {
                    name: name.to_string(),
                    offset: found.offset,
                    layout,
                });
            }
            return (record.size <= MAX_VALUE_SIZE).then_some(Layout::Record {
                fields,
                size: record.size,
            });
        }
        let btf = self.btf()?;
        let id = struct_named(btf, c_type)?;
        let size = btf.size_of(id);
        if size > MAX_VALUE_SIZE {
            return None;
        }
        let mut fields = Vec::new();
        for name in btf.member_names(id) {
            let m = btf.member(id, name)?;
            let (offset, bits) = Bits::at(m.bit_offset, m.bitfield_size);
            let layout = if m.bitfield_size != 0 {
                bits_layout(bits)?
            } else if btf.kind_of(btf.skip_aliases(m.type_id)) == Some(kind::FLOAT) {
                Layout::None
            } else {
                self.btf_value_type(btf, m.type_id, depth + 1)?.layout()
            };
            fields.push(NamedField {
                name: name.to_string(),
                offset,
                layout,
            });
        }
        Some(Layout::Record { fields, size })
    }

    /// The value type of a BTF type held by value (a member or an array's
    /// element): integers at their width, pointers, `char` arrays as
    /// strings, other arrays, structs; `None` for what weft cannot hold.
    pub(super) fn btf_value_type(&self, btf: &Btf, id: u32, depth: usize) -> Option<Type> {
        if depth > MAX_DEPTH {
            return None;
        }
        match btf.kind_of(id)? {
            kind::INT | kind::ENUM | kind::ENUM64 => {
                let p = btf.value_param(id);
                matches!(p.size, 1 | 2 | 4 | 8).then_some(Type::Int {
                    size: p.size as u8,
                    signed: p.signed,
                })
            }
            kind::PTR => Some(Type::Pointer {
                c_type: btf.c_type(id),
            }),
            kind::ARRAY => {
                let (elem, len) = btf.array(id)?;
                if depth > 0 && btf.kind_of(elem) == Some(kind::INT) && btf.size_of(elem) == 1 {
                    // bpftrace reads BTF's byte arrays as strings.
                    return Some(Type::Str { size: len });
                }
                Some(Type::Array {
                    elem: Box::new(self.btf_value_type(btf, elem, depth + 1)?),
                    len,
                })
            }
            kind::STRUCT | kind::UNION => {
                let c_type = struct_c_type(btf, id);
                let layout = self.struct_layout(&c_type, depth + 1).map(Box::new);
                Some(Type::Struct { c_type, layout })
            }
            _ => None,
        }
    }

    /// The same for a type of the script's C definitions (only plain
    /// `char` arrays are strings there, as bpftrace's C parser has it).
    pub(super) fn script_value_type(&self, t: &CType, depth: usize) -> Option<Type> {
        if depth > MAX_DEPTH {
            return None;
        }
        match t {
            CType::Int { size, signed } if matches!(size, 1 | 2 | 4 | 8) => Some(Type::Int {
                size: *size,
                signed: *signed,
            }),
            CType::Int { .. } => None,
            CType::Char => Some(Type::Int {
                size: 1,
                signed: true,
            }),
            CType::Pointer(c) => Some(Type::Pointer { c_type: c.clone() }),
            CType::Array { elem, len } if **elem == CType::Char && depth > 0 => {
                Some(Type::Str { size: *len })
            }
            CType::Array { elem, len } => Some(Type::Array {
                elem: Box::new(self.script_value_type(elem, depth + 1)?),
                len: *len,
            }),
            CType::Record(c) => {
                let layout = self.struct_layout(c, depth + 1).map(Box::new);
                Some(Type::Struct {
                    c_type: c.clone(),
                    layout,
                })
            }
            CType::Float { .. } => None,
        }
    }
}
