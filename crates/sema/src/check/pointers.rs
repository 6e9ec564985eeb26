//! Pointers as C has them: what a C type spelling holds as a value, the
//! size a pointer's arithmetic scales by (`(int32 *)p + 1` moves 4 bytes,
//! `(struct A *)p - 5` moves 5 structs), `*p` of any pointer, `&x`, and
//! `p[i]`. The code generator reads through a pointer with one
//! `bpf_probe_read` of the pointee's width (`codegen::lower::members`).

use ktypes::btf::kind;
use syntax::ast::{BinaryOp, Expr, ExprKind};

use super::members::{MemberAccess, MemberValue};
use super::{Checker, Scope};
use crate::ctypes::{int_type, pointee};
use crate::diagnostics as diag;
use crate::types::Type;

/// `const struct file` → `struct file`.
fn unqualified(c: &str) -> String {
    c.split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How a value of type `t` is written in C, for the pointer `&x` makes
/// (`uint64 *`); `None` for values C has no spelling for.
pub(crate) fn c_spelling(t: &Type) -> Option<String> {
    match t {
        Type::Int { size, signed } => {
            Some(format!("{}int{}", if *signed { "" } else { "u" }, size * 8))
        }
        Type::Enum { def, .. } => Some(format!("enum {}", def.name)),
        Type::Pointer { c_type } => Some(c_type.trim_end().to_string()),
        Type::Struct { c_type, .. } => Some(c_type.clone()),
        Type::Str { .. } => Some("char".into()),
        _ => None,
    }
}

/// Whether `&$x` of a value of type `t` points to `t` itself (read back
/// whole by `*`), where C has no spelling for it.
fn held_by_pointee(t: &Type) -> bool {
    matches!(
        t,
        Type::Str { .. }
            | Type::Tuple(_)
            | Type::Record(_)
            | Type::Named(_)
            | Type::Inet
            | Type::MacAddr
            | Type::Buf { .. }
            | Type::Timestamp { .. }
            | Type::Sym { .. }
            | Type::CgroupPath
            | Type::Stack { .. }
    )
}

/// The pointer type to a value spelled `c` (`int32` → `int32 *`, `int32 *` → `int32 **`).
pub(crate) fn pointer_to(c: &str) -> String {
    let c = c.trim_end();
    if c.ends_with('*') {
        format!("{c}*")
    } else {
        format!("{c} *")
    }
}

impl Checker<'_> {
    /// The enum `name` (of `enum name`): the script's, then the kernel's,
    /// `size` bytes wide (the script's are 64-bit, as bpftrace makes them;
    /// the kernel's as BTF has them unless the caller knows better).
    pub(super) fn enum_type(&self, name: &str, size: Option<u8>) -> Option<Type> {
        if let Some(def) = self.script_types.and_then(|t| t.enum_def(name)) {
            return Some(Type::Enum {
                size: size.unwrap_or(8),
                def,
            });
        }
        let btf = self.btf()?;
        let id = btf
            .find(kind::ENUM, name)
            .or_else(|| btf.find(kind::ENUM64, name))?;
        let def = abi::EnumDef {
            name: name.to_string(),
            variants: btf.enum_variants(id),
        };
        Some(Type::Enum {
            size: size.unwrap_or(btf.size_of(id).clamp(1, 8) as u8),
            def: std::sync::Arc::new(def),
        })
    }

    /// The value a C type spelling holds: an integer of its width, a
    /// pointer, or a struct or union (the script's, then the kernel's);
    /// `None` for `void` and types weft does not know.
    pub(super) fn c_value_type(&self, c: &str) -> Option<Type> {
        let c = c.trim();
        // A pointer, qualifiers after its last `*` dropped (`const char *const`).
        if let Some(star) = c.rfind('*')
            && c[star + 1..]
                .split_whitespace()
                .all(|w| matches!(w, "const" | "volatile" | "restrict" | "__restrict"))
        {
            return Some(Type::Pointer {
                c_type: c[..=star].to_string(),
            });
        }
        let name = unqualified(c);
        if name == "void" {
            return None;
        }
        if let Some((size, signed)) = int_type(&name) {
            return Some(Type::Int { size, signed });
        }
        if name == "char" {
            return Some(Type::Int {
                size: 1,
                signed: true,
            });
        }
        if let Some(enum_name) = name.strip_prefix("enum ") {
            return Some(self.enum_type(enum_name.trim(), None).unwrap_or(Type::Int {
                size: 4,
                signed: false,
            }));
        }
        if name.starts_with("struct ") || name.starts_with("union ") {
            if self.script_types.is_some_and(|t| t.record(&name).is_some()) {
                return Some(self.struct_type(name));
            }
            let btf = self.btf()?;
            let id = super::members::struct_named(btf, &name)?;
            return Some(self.struct_type(super::members::struct_c_type(btf, id)));
        }
        let btf = self.btf()?;
        let id = btf.skip_aliases(btf.find(kind::TYPEDEF, &name)?);
        match btf.kind_of(id) {
            Some(kind::INT | kind::ENUM | kind::ENUM64) => {
                let (size, signed) =
                    int_type(&btf.c_type(id)).unwrap_or((btf.size_of(id).clamp(1, 8) as u8, false));
                Some(Type::Int { size, signed })
            }
            Some(kind::PTR) => Some(Type::Pointer {
                c_type: btf.c_type(id),
            }),
            Some(kind::STRUCT | kind::UNION) => {
                Some(self.struct_type(super::members::struct_c_type(btf, id)))
            }
            _ => None,
        }
    }

    /// What pointer arithmetic on `c_type` scales by: the size of what it
    /// points to (1 for `void *`, as GNU C has it, and for unknown types).
    pub(super) fn pointee_size(&self, c_type: &str) -> u32 {
        let Some(p) = pointee(c_type) else {
            return 1;
        };
        match self.c_value_type(p) {
            Some(Type::Int { size, .. }) => u32::from(size),
            Some(Type::Pointer { .. }) => 8,
            Some(Type::Struct { c_type, .. }) => self.type_size(&c_type).unwrap_or(1),
            _ => 1,
        }
        .max(1)
    }

    /// `ptr + n`, `n + ptr`, `ptr - n`: a pointer of the same type, moved
    /// by `n` of what it points to, as in C. `None` when neither side is a
    /// pointer (ordinary arithmetic).
    pub(super) fn pointer_arithmetic(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        op: BinaryOp,
        l: &Type,
        r: &Type,
    ) -> Option<Type> {
        let ptr = match (op, l, r) {
            (BinaryOp::Add | BinaryOp::Sub, Type::Pointer { .. }, Type::Int { .. }) => l,
            (BinaryOp::Add, Type::Int { .. }, Type::Pointer { .. }) => r,
            _ => return None,
        };
        let Type::Pointer { c_type } = ptr else {
            return None;
        };
        s.probe.scales.insert(e.id, self.pointee_size(c_type));
        Some(ptr.clone())
    }

    /// `target op= n` or `target++` on a pointer: scaled like `ptr + n`.
    pub(super) fn scale_update(&mut self, s: &mut Scope, target: &Expr, t: &Type) {
        if let Type::Pointer { c_type } = t {
            let size = self.pointee_size(c_type);
            s.probe.scales.insert(target.id, size);
        }
    }

    /// `*expr`: what an address points to, read with one `bpf_probe_read`
    /// (0 when unreadable). An integer is read as the `uint64` at that
    /// address, as bpftrace does (`*kaddr("avenrun")`); a pointer as its
    /// pointee: an integer of its width, a pointer, or a struct whose
    /// members `.` reads.
    pub(super) fn deref(&mut self, s: &mut Scope, e: &Expr, inner: &Expr, t: &Type) -> Type {
        let (value, ty) = match t {
            Type::Int { .. } => (
                MemberValue::Int {
                    size: 8,
                    signed: false,
                },
                Type::U64,
            ),
            Type::Pointer { c_type } => match pointee(c_type) {
                Some(p) => match self.pointee_value(e, c_type, p) {
                    Some(found) => found,
                    None => return Type::I64,
                },
                None => {
                    self.error(diag::type_mismatch(inner.span, "`*`", "a pointer", t));
                    return Type::I64;
                }
            },
            _ => {
                self.error(diag::type_mismatch(inner.span, "`*`", "a pointer", t));
                return Type::I64;
            }
        };
        s.probe.members.insert(
            e.id,
            MemberAccess {
                offset: 0,
                arrow: true,
                value,
            },
        );
        ty
    }

    /// How the value a pointer `c_type` points to (spelled `p`) is read, or
    /// `None` after saying why it cannot be.
    fn pointee_value(&mut self, e: &Expr, c_type: &str, p: &str) -> Option<(MemberValue, Type)> {
        if let Some(t) = self.value_pointees.get(p.trim()) {
            // What `&$t` pointed at: a string read as one, a tuple's bytes copied.
            let size = t.layout().size();
            let value = match t {
                Type::Str { size } => MemberValue::Chars {
                    len: size.saturating_sub(1),
                },
                _ => MemberValue::Array { size },
            };
            return Some((value, t.clone()));
        }
        match self.c_value_type(p) {
            Some(Type::Int { size, signed }) if matches!(size, 1 | 2 | 4 | 8) => Some((
                MemberValue::Int { size, signed },
                Type::Int { size, signed },
            )),
            Some(t @ Type::Pointer { .. }) => Some((MemberValue::Pointer, t)),
            Some(t @ Type::Struct { .. }) => Some((MemberValue::Struct, t)),
            None if unqualified(p) == "void" => {
                let t = Type::Pointer {
                    c_type: c_type.to_string(),
                };
                self.error(diag::type_mismatch(
                    e.span,
                    "`*`",
                    "a pointer to a value (cast a `void *` to a typed pointer first)",
                    &t,
                ));
                None
            }
            _ => {
                self.error(diag::not_supported_yet(
                    e.span,
                    &format!("`*` on a `{c_type}`"),
                ));
                None
            }
        }
    }

    /// `&x`: the address of a variable, of a struct member, or of what a
    /// pointer points to (`&*p` is `p`), typed as a pointer to it.
    pub(super) fn addr_of(&mut self, s: &mut Scope, inner: &Expr) -> Type {
        let t = self.expr(s, inner);
        let addressable = match &inner.kind {
            ExprKind::Var(_) => true,
            ExprKind::Field { .. } | ExprKind::Unary { .. } | ExprKind::Index { .. } => {
                s.probe.members.contains_key(&inner.id)
            }
            _ => false,
        };
        if !addressable {
            self.error(diag::type_mismatch(
                inner.span,
                "`&`",
                "a variable or a struct member (a value with an address)",
                &t,
            ));
            return Type::U64;
        }
        match c_spelling(&t) {
            // `&$t` of a string, tuple, record or a builtin's value (a
            // `username`, an `ntop()` address): `*` reads it back whole
            // (bpftrace's pointer to a string is no `char *`).
            _ if held_by_pointee(&t)
                && self
                    .value_pointees
                    .get(&t.to_string())
                    .is_none_or(|known| *known == t) =>
            {
                let spelled = t.to_string();
                self.value_pointees.insert(spelled.clone(), t);
                Type::Pointer {
                    c_type: pointer_to(&spelled),
                }
            }
            Some(c) => Type::Pointer {
                c_type: pointer_to(&c),
            },
            None => Type::Pointer {
                c_type: "void *".into(),
            },
        }
    }

    /// `array[i]`: an element of an array held by value or reached
    /// through a struct, read with one `bpf_probe_read` of its width. A
    /// constant index must be inside the array (a flexible array member,
    /// of length 0, takes any).
    pub(super) fn array_index(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        index: &Expr,
        elem: &Type,
        len: u32,
    ) -> Type {
        if let ExprKind::Int { value, .. } = index.kind
            && len > 0
            && value >= u64::from(len)
        {
            self.error(diag::index_out_of_bounds(index.span, value, len));
        }
        self.note_array_index(s, e, index, len);
        let Some(value) = super::members::member_value(elem) else {
            self.error(diag::not_supported_yet(
                e.span,
                &format!("an element of type `{elem}`"),
            ));
            return Type::I64;
        };
        let size = match elem {
            Type::Struct { c_type, .. } => self.type_size(c_type).unwrap_or(0),
            _ => elem.layout().size(),
        };
        s.probe.scales.insert(e.id, size);
        s.probe.members.insert(
            e.id,
            MemberAccess {
                offset: 0,
                arrow: false,
                value,
            },
        );
        elem.clone()
    }

    /// `(int8[N])x`: the bytes of an integer, a string or another array as
    /// an array of the same size (`(int8[])` takes the length that makes
    /// it so).
    pub(super) fn cast_to_array(&mut self, x: &Expr, from: &Type, elem: Type, len: u32) -> Type {
        let elem_size = elem.layout().size().max(1);
        // A literal takes the width it is cast to (`(int8[8])12345`), up
        // to 64 bits, as bpftrace's literals do.
        let literal = match &x.kind {
            ExprKind::Int { .. } => true,
            ExprKind::Unary {
                op: syntax::ast::UnaryOp::Neg,
                expr,
            } => matches!(expr.kind, ExprKind::Int { .. }),
            _ => false,
        };
        let from_size = match from {
            Type::Int { size, .. } if literal => {
                let wanted = elem_size * len;
                if len == 0 || wanted > 8 || wanted < u32::from(*size) {
                    8
                } else {
                    wanted
                }
            }
            Type::Int { size, .. } => u32::from(*size),
            Type::Str { .. } | Type::Array { .. } => from.layout().size(),
            _ => 0,
        };
        let len = if len == 0 { from_size / elem_size } else { len };
        let to = Type::Array {
            elem: Box::new(elem),
            len,
        };
        if len == 0 || to.layout().size() != from_size {
            self.error(diag::type_mismatch(
                x.span,
                &format!("a cast to `{to}`"),
                &format!("a value of {} bytes", to.layout().size()),
                from,
            ));
        }
        to
    }

    /// `(a = x, b = y)`: a record, its fields stored as a tuple's are.
    pub(super) fn record(&mut self, s: &mut Scope, fields: &[(String, Expr)]) -> Type {
        let mut out: Vec<(String, Type)> = Vec::new();
        for (name, x) in fields {
            let t = self.expr(s, x).stored();
            if !crate::check::is_storable(&t) {
                self.error(diag::type_mismatch(
                    x.span,
                    "a record field",
                    "a value that can be stored",
                    &t,
                ));
            }
            if out.iter().any(|(n, _)| n == name) {
                self.error(diag::type_mismatch(
                    x.span,
                    &format!("record field `{name}`"),
                    "a name used once",
                    &t,
                ));
            }
            out.push((name.clone(), t));
        }
        Type::Record(out)
    }

    /// `ptr[i]`: the `i`-th value after the one `ptr` points to, read like
    /// `*(ptr + i)`.
    pub(super) fn pointer_index(&mut self, s: &mut Scope, e: &Expr, c_type: &str) -> Type {
        let Some(p) = pointee(c_type) else {
            return Type::I64;
        };
        let Some((value, ty)) = self.pointee_value(e, c_type, p) else {
            return Type::I64;
        };
        s.probe.scales.insert(e.id, self.pointee_size(c_type));
        s.probe.members.insert(
            e.id,
            MemberAccess {
                offset: 0,
                arrow: true,
                value,
            },
        );
        ty
    }
}
