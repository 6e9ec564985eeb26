//! Struct and union members through the kernel's BTF, or through the
//! script's own C definitions (`crate::ctypes`), which come first:
//!
//! - `ptr->member`, where `ptr` is a pointer to a struct or union: typed
//!   `args->NAME` of fentry/rawtracepoint, a member that is a pointer,
//!   `curtask` (a `struct task_struct *`), or a cast `(struct file *)arg0`;
//! - `value.member` on a struct reached by `->` (an embedded struct, as
//!   `file->f_path.dentry`), which only adds the member's offset.
//!
//! Members of anonymous structs and unions are found by name, as C does.
//! A member's value is typed by BTF: integers and enums at their width and
//! sign, pointers as addresses, `char` arrays as strings, structs and unions
//! as places for a further `.`, bitfields as unsigned integers of their
//! declared type (the bytes that hold them read, shifted and masked, as
//! bpftrace reads them: never sign-extended). Arrays of other types are
//! reported as not supported. The code generator reads each `->` hop with one
//! `bpf_probe_read_kernel` (`codegen::lower::members`).

use ktypes::Btf;
use ktypes::btf::kind;
use source::Diagnostic;
use syntax::ast::{Expr, ExprKind, TypeName, TypeOrExpr};

use super::{Checker, Scope};
use crate::diagnostics as diag;
use crate::types::Type;

/// What a member access reads, recorded per `Field` node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberAccess {
    /// Byte offset of the member from the start of its struct.
    pub offset: u32,
    /// `->` (the base is an address held in a register) or `.` (the base is
    /// itself a struct member, whose address is computed).
    pub arrow: bool,
    pub value: MemberValue,
}

/// How a member's value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberValue {
    /// An integer (or enum) of `size` bytes.
    Int { size: u8, signed: bool },
    /// An address (8 bytes).
    Pointer,
    /// A struct or union: nothing is read, a `.` may follow.
    Struct,
    /// A `char` array of `len` bytes, read as a string.
    Chars { len: u32 },
    /// Any other array, `size` bytes copied as they are; `[i]` reads an element.
    Array { size: u32 },
    /// A bitfield: `size` bytes (1, 2, 4, 8) from the member's offset,
    /// shifted right by `shift` bits and masked to `width` bits.
    Bits { size: u8, shift: u8, width: u8 },
}

impl MemberValue {
    /// How a bitfield at `bits` (from the member's offset) is read, or
    /// `None` for one no 8 bytes hold.
    pub fn bits(bits: crate::ctypes::Bits) -> Option<MemberValue> {
        match bits.window() {
            0 => None,
            size => Some(MemberValue::Bits {
                size,
                shift: bits.shift,
                width: bits.width,
            }),
        }
    }
}

/// How a value of type `t` is read from memory, as a member or element.
pub(super) fn member_value(t: &Type) -> Option<MemberValue> {
    Some(match t {
        Type::Int { size, signed } => MemberValue::Int {
            size: *size,
            signed: *signed,
        },
        Type::Enum { size, .. } => MemberValue::Int {
            size: *size,
            signed: false,
        },
        Type::Pointer { .. } => MemberValue::Pointer,
        Type::Struct { .. } => MemberValue::Struct,
        Type::Array { .. } => MemberValue::Array {
            size: t.layout().size(),
        },
        _ => return None,
    })
}

/// How an anonymous struct or union is named in a [`Type`]: it has no C
/// name to find it by again, so the name carries its BTF id.
const ANONYMOUS: &str = "(anonymous #";

/// The C spelling of struct or union `id`, or for an anonymous one (such
/// as `in6_u` in `struct in6_addr`) `union (anonymous #ID)`.
pub(super) fn struct_c_type(btf: &Btf, id: u32) -> String {
    let id = btf.skip_aliases(id);
    let c = btf.c_type(id);
    match c.trim_end() {
        "struct" | "union" => format!("{} {ANONYMOUS}{id})", c.trim_end()),
        _ => c,
    }
}

/// The C type `curtask` has.
const TASK_STRUCT_PTR: &str = "struct task_struct *";

/// True for the bases `->`/`.` resolve through BTF.
pub(crate) fn applies(base: &Type, expr: &Expr) -> bool {
    matches!(
        base,
        Type::Pointer { .. } | Type::Struct { .. } | Type::Int { .. }
    ) || is_curtask(expr)
}

fn is_curtask(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Ident(n) if n == "curtask")
}

/// `(struct NAME *)`, `(union NAME *)`: a cast [`Checker::struct_pointer_cast`] types.
pub(crate) fn is_struct_pointer(ty: &TypeName) -> bool {
    ty.pointer_depth > 0
        && ty.array_len.is_none()
        && (ty.base.starts_with("struct ") || ty.base.starts_with("union "))
}

/// The struct or union a pointer's C type points to (`struct file *`,
/// `const struct path *`, a typedef of a struct), if it is one.
fn pointee(btf: &Btf, c_type: &str) -> Option<u32> {
    let inner = c_type.trim_end().strip_suffix('*')?.trim_end();
    struct_named(btf, inner)
}

/// A struct or union type by its C spelling, qualifiers ignored.
pub(super) fn struct_named(btf: &Btf, c_type: &str) -> Option<u32> {
    let mut name = c_type.trim();
    while let Some(("const" | "volatile", rest)) = name.split_once(' ') {
        name = rest.trim();
    }
    if let Some(id) = name
        .split_once(ANONYMOUS)
        .and_then(|(_, rest)| rest.trim_end_matches(')').parse::<u32>().ok())
    {
        return matches!(btf.kind_of(id), Some(kind::STRUCT | kind::UNION)).then_some(id);
    }
    let id = if let Some(n) = name.strip_prefix("struct ") {
        btf.find(kind::STRUCT, n.trim())?
    } else if let Some(n) = name.strip_prefix("union ") {
        btf.find(kind::UNION, n.trim())?
    } else if name.contains(['*', '[']) {
        return None;
    } else {
        btf.skip_aliases(btf.find(kind::TYPEDEF, name)?)
    };
    matches!(btf.kind_of(id), Some(kind::STRUCT | kind::UNION)).then_some(id)
}

impl Checker<'_> {
    /// `(struct NAME *)expr`: an address as a pointer to a struct of the kernel's BTF.
    pub(super) fn struct_pointer_cast(
        &mut self,
        s: &mut Scope,
        ty: &TypeName,
        expr: &Expr,
    ) -> Type {
        let from = self.expr(s, expr);
        if !from.is_scalar() {
            self.error(diag::bad_struct_cast(expr.span, &from));
        }
        let stars = "*".repeat(ty.pointer_depth as usize);
        let c_type = format!("{} {stars}", ty.base.trim());
        if self.script_record(ty.base.trim()).is_some() {
            return Type::Pointer { c_type };
        }
        let Some(btf) = self.btf() else {
            self.error(diag::struct_needs_btf(
                ty.span,
                &ty.base,
                "this kernel has none (/sys/kernel/btf/vmlinux)",
            ));
            return Type::Pointer { c_type };
        };
        if struct_named(btf, &ty.base).is_none() {
            let (k, prefix) = if ty.base.starts_with("union ") {
                (kind::UNION, "union ")
            } else {
                (kind::STRUCT, "struct ")
            };
            let wanted = ty.base[prefix.len()..].trim();
            let known: Vec<&str> = if wanted.len() > 1 {
                btf.names_of(k)
                    .into_iter()
                    .filter(|n| n.len().abs_diff(wanted.len()) <= wanted.len() / 3 + 1)
                    .collect()
            } else {
                Vec::new()
            };
            self.error(diag::unknown_struct(ty.span, ty.base.trim(), &known));
        }
        Type::Pointer { c_type }
    }

    /// `base->name` or `base.name` on a struct of the kernel's BTF.
    pub(super) fn member(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        base_expr: &Expr,
        base: &Type,
        name: &str,
        arrow: bool,
    ) -> Type {
        // `curtask` is a `struct task_struct *`, kept a u64 elsewhere.
        let base = if is_curtask(base_expr) && s.probe.builtins.contains_key(&base_expr.id) {
            Type::Pointer {
                c_type: TASK_STRUCT_PTR.into(),
            }
        } else {
            base.clone()
        };
        // `.` on a pointer reads through it, as `->` does (bpftrace's
        // current dialect: `curtask.comm`, `args.rqtp.tv_sec`).
        let written_arrow = arrow;
        let arrow = arrow || matches!(base, Type::Pointer { .. });
        let c_type = match (&base, arrow) {
            (Type::Pointer { c_type }, true) => c_type.clone(),
            (Type::Struct { c_type, .. }, false) => c_type.clone(),
            (_, true) => {
                self.error(diag::arrow_on_non_pointer(base_expr.span, &base));
                return Type::I64;
            }
            (_, false) => {
                self.error(diag::not_supported_yet(
                    e.span,
                    &format!("`.` on a `{base}`"),
                ));
                return Type::I64;
            }
        };
        // A struct the script defines hides the kernel's of that name.
        let record_name = if arrow {
            crate::ctypes::pointee(&c_type).map(str::to_string)
        } else {
            Some(c_type.clone())
        };
        if let Some(record) = record_name.as_deref().and_then(|n| self.script_record(n)) {
            return self.script_member(s, e, &record, name, arrow);
        }
        let Some(btf) = self.btf() else {
            self.error(diag::struct_needs_btf(
                e.span,
                &c_type,
                "this kernel has none (/sys/kernel/btf/vmlinux)",
            ));
            return Type::I64;
        };
        let id = if arrow {
            pointee(btf, &c_type)
        } else {
            struct_named(btf, &c_type)
        };
        let Some(id) = id else {
            let unknown_struct = c_type.starts_with("struct ") || c_type.starts_with("union ");
            if arrow && unknown_struct && matches!(base_expr.kind, ExprKind::Cast { .. }) {
                // The cast already said the struct is unknown.
                return Type::I64;
            }
            if arrow && !written_arrow {
                self.error(diag::dot_on_pointer(e.span, &base));
            } else if arrow {
                self.error(diag::arrow_on_non_pointer(base_expr.span, &base));
            } else {
                self.error(diag::unknown_struct(e.span, &c_type, &[]));
            }
            return Type::I64;
        };
        let shown = btf.c_type(id);
        let Some(m) = btf.member(id, name) else {
            let names = btf.member_names(id);
            self.error(diag::no_such_member(e.span, &shown, name, &names));
            return Type::I64;
        };
        let (offset, bits) = crate::ctypes::Bits::at(m.bit_offset, m.bitfield_size);
        if m.bitfield_size != 0 {
            let p = btf.member_param(&m);
            let read = MemberValue::bits(bits).filter(|_| matches!(p.size, 1 | 2 | 4 | 8));
            let access = read.map(|value| MemberAccess {
                offset,
                arrow,
                value,
            });
            return self.bitfield(s, e, (&shown, name), access, (p.size as u8, p.signed));
        }
        let member_c_type = btf.c_type(m.type_id);
        let (value, t) = match btf.kind_of(m.type_id) {
            Some(kind::PTR) => (
                MemberValue::Pointer,
                Type::Pointer {
                    c_type: member_c_type,
                },
            ),
            Some(kind::INT | kind::ENUM | kind::ENUM64) => {
                let p = btf.member_param(&m);
                match p.size {
                    1 | 2 | 4 | 8 => {
                        let size = p.size as u8;
                        (
                            MemberValue::Int {
                                size,
                                signed: p.signed,
                            },
                            Type::Int {
                                size,
                                signed: p.signed,
                            },
                        )
                    }
                    _ => {
                        self.error(diag::member_not_supported(
                            e.span,
                            &shown,
                            name,
                            &format!("a {}-byte integer", p.size),
                        ));
                        return Type::I64;
                    }
                }
            }
            Some(kind::STRUCT | kind::UNION) => (
                MemberValue::Struct,
                self.struct_type(struct_c_type(btf, m.type_id)),
            ),
            Some(kind::ARRAY) => match btf.array(m.type_id) {
                Some((elem, len))
                    if btf.kind_of(elem) == Some(kind::INT)
                        && btf.size_of(elem) == 1
                        && len > 0 =>
                {
                    (MemberValue::Chars { len }, Type::Str { size: len })
                }
                _ if let Some(t) = self.btf_value_type(btf, m.type_id, 0) => (
                    MemberValue::Array {
                        size: t.layout().size(),
                    },
                    t,
                ),
                _ => {
                    self.error(diag::member_not_supported(
                        e.span,
                        &shown,
                        name,
                        &format!("an array (`{member_c_type}`)"),
                    ));
                    return Type::I64;
                }
            },
            _ => {
                self.error(diag::member_not_supported(
                    e.span,
                    &shown,
                    name,
                    &format!("a `{member_c_type}`"),
                ));
                return Type::I64;
            }
        };
        s.probe.members.insert(
            e.id,
            MemberAccess {
                offset,
                arrow,
                value,
            },
        );
        t
    }

    /// A bitfield member (`owner`'s `name`), read as an integer of its
    /// declared `(size, signed)`; `None` for bits the 8 bytes read from the
    /// field's first byte cannot hold.
    fn bitfield(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        (owner, name): (&str, &str),
        access: Option<MemberAccess>,
        (size, signed): (u8, bool),
    ) -> Type {
        let Some(access) = access else {
            self.error(diag::member_not_supported(
                e.span,
                owner,
                name,
                "a bitfield wider than 8 bytes from its first byte",
            ));
            return Type::I64;
        };
        s.probe.members.insert(e.id, access);
        Type::Int { size, signed }
    }

    /// A struct or union the script defines, by its C name.
    fn script_record(&self, c_name: &str) -> Option<crate::ctypes::CRecord> {
        self.script_types?.record(c_name).cloned()
    }

    /// `base->name` or `base.name` on a struct the script defines.
    fn script_member(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        record: &crate::ctypes::CRecord,
        name: &str,
        arrow: bool,
    ) -> Type {
        use crate::ctypes::CType;
        let Some(types) = self.script_types else {
            return Type::I64;
        };
        let Some(found) = types.member(record, name) else {
            let names = types.member_names(record);
            self.error(diag::no_such_member(e.span, &record.c_name, name, &names));
            return Type::I64;
        };
        let bitfield = match (&found.ty, found.bits) {
            (CType::Int { size, signed }, Some(bits)) => Some((*size, *signed, bits)),
            (CType::Char, Some(bits)) => Some((1, true, bits)),
            _ => None,
        };
        if let Some((size, signed, bits)) = bitfield {
            let access = MemberValue::bits(bits).map(|value| MemberAccess {
                offset: found.offset,
                arrow,
                value,
            });
            return self.bitfield(s, e, (&record.c_name, name), access, (size, signed));
        }
        let (value, t) = match &found.ty {
            CType::Int { size, signed } if matches!(size, 1 | 2 | 4 | 8) => (
                MemberValue::Int {
                    size: *size,
                    signed: *signed,
                },
                Type::Int {
                    size: *size,
                    signed: *signed,
                },
            ),
            CType::Pointer(c) => (MemberValue::Pointer, Type::Pointer { c_type: c.clone() }),
            CType::Record(c) => (MemberValue::Struct, self.struct_type(c.clone())),
            CType::Char => (
                MemberValue::Int {
                    size: 1,
                    signed: true,
                },
                Type::Int {
                    size: 1,
                    signed: true,
                },
            ),
            // A byte more than the array, as bpftrace has it: a `char[N]`
            // holding N characters prints whole, never as a cut string.
            CType::Array { elem, len } if **elem == CType::Char => (
                MemberValue::Chars { len: *len },
                Type::Str { size: *len + 1 },
            ),
            t @ CType::Array { .. } if let Some(t) = self.script_value_type(t, 0) => (
                MemberValue::Array {
                    size: t.layout().size(),
                },
                t,
            ),
            other => {
                let what = match other {
                    CType::Array { .. } => "an array".to_string(),
                    // BPF has no floating point; printed in a struct, it is `null`.
                    CType::Float { .. } => "a floating-point number".to_string(),
                    _ => "an integer of that width".to_string(),
                };
                self.error(diag::member_not_supported(
                    e.span,
                    &record.c_name,
                    name,
                    &what,
                ));
                return Type::I64;
            }
        };
        s.probe.members.insert(
            e.id,
            MemberAccess {
                offset: found.offset,
                arrow,
                value,
            },
        );
        t
    }

    /// `sizeof(TYPE)` or `sizeof(expr)`: a constant, as C gives it.
    pub(super) fn size_of(&mut self, s: &mut Scope, e: &Expr, arg: &TypeOrExpr) -> Type {
        let size = match arg {
            // `sizeof(x)` in a macro whose `x` is an expression.
            TypeOrExpr::Type(t) if t.pointer_depth == 0 && t.of.is_some() => {
                let (Some(of), n) = (t.of.as_deref(), t.array_len.unwrap_or(1)) else {
                    return Type::U64;
                };
                self.size_of(s, e, of);
                let one = s.probe.constants.get(&e.id).copied().unwrap_or(0);
                s.probe.constants.insert(e.id, one * n as i64);
                return Type::U64;
            }
            TypeOrExpr::Type(t) => {
                let base = if t.pointer_depth > 0 {
                    Some(8)
                } else if t.base == "string" {
                    Some(crate::types::DEFAULT_STR_SIZE)
                } else {
                    self.type_size(&t.base)
                };
                // `sizeof(BTF_VAR_STATIC)`: an enumerator, which bpftrace
                // gives 64 bits.
                let enumerator = || {
                    t.pointer_depth == 0
                        && (self
                            .script_types
                            .is_some_and(|ts| ts.enumerator(&t.base).is_some())
                            || self.btf().is_some_and(|b| b.enum_value(&t.base).is_some()))
                };
                let Some(base) = base.or_else(|| enumerator().then_some(8)) else {
                    self.error(diag::unknown_c_type(t.span, &t.base));
                    return Type::U64;
                };
                u64::from(base) * t.array_len.unwrap_or(1)
            }
            TypeOrExpr::Expr(x) => {
                let t = self.expr(s, x);
                let size = match &t {
                    Type::Int { size, .. } => Some(u32::from(*size)),
                    Type::Str { size } => Some(*size),
                    Type::Pointer { .. } => Some(8),
                    Type::Struct { c_type, .. } => self.type_size(c_type),
                    other => Some(other.layout().size()).filter(|n| *n > 0),
                };
                let Some(size) = size else {
                    self.error(diag::type_mismatch(
                        x.span,
                        "sizeof()",
                        "a value with a size",
                        &t,
                    ));
                    return Type::U64;
                };
                u64::from(size)
            }
        };
        s.probe.constants.insert(e.id, size as i64);
        Type::U64
    }

    /// The size of a type by name: an integer type, a struct of the script
    /// or of the kernel's BTF, a typedef of BTF.
    pub(super) fn type_size(&self, name: &str) -> Option<u32> {
        let none = crate::ctypes::ScriptTypes::default();
        let types = self.script_types.unwrap_or(&none);
        // BTF is read only for a type the script does not define.
        types
            .size_of_name(name, None)
            .or_else(|| types.size_of_name(name, Some(self.btf()?)))
    }

    /// `offsetof(struct T, a.b)`: the byte offset of a member (through
    /// embedded structs), as a constant.
    pub(super) fn offset_of(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        ty: &TypeOrExpr,
        fields: &[String],
    ) -> Type {
        let mut record = match ty {
            TypeOrExpr::Type(t) if t.pointer_depth == 0 => t.base.trim().to_string(),
            TypeOrExpr::Type(t) => {
                self.error(diag::type_mismatch(
                    t.span,
                    "offsetof()",
                    "a struct or union",
                    &Type::Pointer {
                        c_type: format!("{} *", t.base),
                    },
                ));
                return Type::U64;
            }
            TypeOrExpr::Expr(x) => match self.expr(s, x) {
                Type::Struct { c_type, .. } => c_type,
                other => {
                    self.error(diag::type_mismatch(
                        x.span,
                        "offsetof()",
                        "a struct or union",
                        &other,
                    ));
                    return Type::U64;
                }
            },
        };
        let mut offset = 0u64;
        for (i, field) in fields.iter().enumerate() {
            match self.member_offset(&record, field, e.span) {
                Ok((at, next)) => {
                    offset += u64::from(at);
                    match next {
                        Some(n) => record = n,
                        None if i + 1 < fields.len() => {
                            self.error(diag::member_not_supported(
                                e.span,
                                &record,
                                field,
                                "not a struct or union, so it has no members",
                            ));
                            return Type::U64;
                        }
                        None => {}
                    }
                }
                Err(d) => {
                    self.error(d);
                    return Type::U64;
                }
            }
        }
        s.probe.constants.insert(e.id, offset as i64);
        Type::U64
    }

    /// The offset of member `field` of the record `c_name` and, when the
    /// member is itself a struct or union, its C name.
    #[allow(clippy::result_large_err, reason = "the error is reported as it is")]
    fn member_offset(
        &self,
        c_name: &str,
        field: &str,
        span: source::Span,
    ) -> Result<(u32, Option<String>), Diagnostic> {
        if let Some(record) = self.script_record(c_name) {
            let types = self.script_types.expect("a script record comes from them");
            let found = types.member(&record, field).ok_or_else(|| {
                diag::no_such_member(span, c_name, field, &types.member_names(&record))
            })?;
            let next = match found.ty {
                crate::ctypes::CType::Record(n) => Some(n),
                _ => None,
            };
            return Ok((found.offset, next));
        }
        let Some(btf) = self.btf() else {
            return Err(diag::struct_needs_btf(
                span,
                c_name,
                "this kernel has none (/sys/kernel/btf/vmlinux)",
            ));
        };
        let Some(id) = struct_named(btf, c_name) else {
            return Err(diag::unknown_c_type(span, c_name));
        };
        let m = btf
            .member(id, field)
            .ok_or_else(|| diag::no_such_member(span, c_name, field, &btf.member_names(id)))?;
        let next = matches!(btf.kind_of(m.type_id), Some(kind::STRUCT | kind::UNION))
            .then(|| struct_c_type(btf, m.type_id));
        Ok((m.bit_offset / 8, next))
    }
}
