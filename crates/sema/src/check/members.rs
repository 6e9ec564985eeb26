//! Struct and union members through the kernel's BTF:
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
//! as places for a further `.`. Bitfields and other arrays are reported as
//! not supported. The code generator reads each `->` hop with one
//! `bpf_probe_read_kernel` (`codegen::lower::members`).

use ktypes::Btf;
use ktypes::btf::kind;
use syntax::ast::{Expr, ExprKind, TypeName};

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
}

/// How an anonymous struct or union is named in a [`Type`]: it has no C
/// name to find it by again, so the name carries its BTF id.
const ANONYMOUS: &str = "(anonymous #";

/// The C spelling of struct or union `id`, or for an anonymous one (such
/// as `in6_u` in `struct in6_addr`) `union (anonymous #ID)`.
fn struct_c_type(btf: &Btf, id: u32) -> String {
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
fn struct_named(btf: &Btf, c_type: &str) -> Option<u32> {
    let mut name = c_type.trim();
    loop {
        match name.split_once(' ') {
            Some(("const" | "volatile", rest)) => name = rest.trim(),
            _ => break,
        }
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
        let c_type = match (&base, arrow) {
            (Type::Pointer { c_type }, true) => c_type.clone(),
            (Type::Struct { c_type }, false) => c_type.clone(),
            (Type::Pointer { .. }, false) => {
                self.error(diag::dot_on_pointer(e.span, &base));
                return Type::I64;
            }
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
            if arrow {
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
        if m.bitfield_size != 0 {
            self.error(diag::member_not_supported(
                e.span,
                &shown,
                name,
                "a bitfield",
            ));
            return Type::I64;
        }
        let offset = m.bit_offset / 8;
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
                Type::Struct {
                    c_type: struct_c_type(btf, m.type_id),
                },
            ),
            Some(kind::ARRAY) => match btf.array(m.type_id) {
                Some((elem, len))
                    if btf.kind_of(elem) == Some(kind::INT)
                        && btf.size_of(elem) == 1
                        && len > 0 =>
                {
                    (MemberValue::Chars { len }, Type::Str { size: len })
                }
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
}
