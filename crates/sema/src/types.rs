//! The types the checker assigns to expressions, maps and variables.

use std::fmt;

use abi::{Aggregation, Layout};

/// The size of strings that do not follow `max_strlen`: `func`, `probe`,
/// the `string` type name in casts and `sizeof`, a tracepoint's
/// `__data_loc` string field.
pub const DEFAULT_STR_SIZE: u32 = 64;
/// Size of `comm` (TASK_COMM_LEN).
pub const COMM_SIZE: u32 = 16;

/// The type of a value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// An integer of `size` bytes (1, 2, 4, 8).
    Int { size: u8, signed: bool },
    /// An unsigned integer of `size` bytes whose C type is an enum (an
    /// enumerator, `(enum foo)x`, a member of an enum type): printed as
    /// the enumerator's name. Arithmetic on it gives a plain integer.
    Enum {
        size: u8,
        def: std::sync::Arc<abi::EnumDef>,
    },
    /// `true` or `false`: a literal, a comparison, `!`, `&&`, `||`, a
    /// `(bool)` cast. An integer in arithmetic; printed as `true`/`false`.
    Bool,
    /// A NUL-padded string buffer of `size` bytes.
    Str { size: u32 },
    /// An address; `c_type` is the C type it was declared with (`const char *`),
    /// which tells whether `str()` may read it.
    Pointer { c_type: String },
    /// An IP address made by `ntop()`, printed as text.
    Inet,
    /// A MAC address made by `macaddr()`: 6 bytes, printed as text.
    MacAddr,
    /// A tuple `(a, b, ...)`.
    Tuple(Vec<Type>),
    /// A record (named tuple) `(a = 1, b = "x")`, its fields in the order
    /// written; `.a` reads one.
    Record(Vec<(String, Type)>),
    /// A C array held by value (`int x[4]` read from a struct): `len`
    /// elements of `elem` at their C width (0 for a flexible array member,
    /// which can only be indexed).
    Array { elem: Box<Type>, len: u32 },
    /// The value of an aggregation map (`@x = count()`); only usable as a map value.
    Agg(Aggregation),
    /// The `args` of a tracepoint: only `args->field` may be used.
    TracepointArgs,
    /// The `args` of a `stream:NAME` handler (the record of stream N).
    StreamArgs(usize),
    /// No value (statements, `printf(...)`, `delete(...)`).
    Void,
    /// `kstack`/`ustack`: a captured stack of at most `limit` frames, printed in `mode`.
    Stack {
        user: bool,
        mode: abi::StackMode,
        limit: u32,
    },
    /// `ksym(addr)`/`usym(addr)`: an address printed as the name of its symbol.
    Sym { user: bool },
    /// A struct or union (`c_type` is `struct path`): in memory reached by
    /// `->` or `*`, where `.member` reads it, or held by value in a
    /// variable, map or tuple, as `layout` (a record at the C offsets;
    /// `None` when weft cannot hold it: a bitfield, a member type it does
    /// not read).
    Struct {
        c_type: String,
        layout: Option<Box<Layout>>,
    },
    /// `buf(ptr, len)`: up to `size` bytes, printed by `%r`.
    Buf { size: u32 },
    /// `strftime(fmt, ns)`: a time printed by `%s` in format `format`
    /// (an index of the script's time formats).
    Timestamp { format: u32 },
    /// `cgroup_path(id[, filter])`: a cgroup id printed as its paths.
    CgroupPath,
    /// `strerror(n)`, `signal_name(n)`, `syscall_name(n)`: a number printed as its name.
    Named(abi::NameTable),
}

impl Type {
    pub const U64: Type = Type::Int {
        size: 8,
        signed: false,
    };
    pub const I64: Type = Type::Int {
        size: 8,
        signed: true,
    };
    pub const U32: Type = Type::Int {
        size: 4,
        signed: false,
    };

    pub fn is_int(&self) -> bool {
        matches!(self, Type::Int { .. } | Type::Enum { .. })
    }

    /// Integers, enums, booleans and pointers: anything that fits a register.
    pub fn is_scalar(&self) -> bool {
        matches!(
            self,
            Type::Int { .. } | Type::Enum { .. } | Type::Bool | Type::Pointer { .. }
        )
    }

    pub fn is_str(&self) -> bool {
        matches!(self, Type::Str { .. })
    }

    pub fn is_signed(&self) -> bool {
        matches!(self, Type::Int { signed: true, .. })
    }

    /// The type as stored in a map key or value, a record or a variable:
    /// integers widen to 64 bits, as bpftrace does; a pointer stays one (a
    /// key prints in hex, as bpftrace prints it).
    pub fn stored(&self) -> Type {
        match self {
            Type::Int { signed, .. } => Type::Int {
                size: 8,
                signed: *signed,
            },
            Type::Enum { def, .. } => Type::Enum {
                size: 8,
                def: def.clone(),
            },
            Type::Tuple(ts) => Type::Tuple(ts.iter().map(Type::in_tuple).collect()),
            Type::Record(fs) => {
                Type::Record(fs.iter().map(|(n, t)| (n.clone(), t.stored())).collect())
            }
            other => other.clone(),
        }
    }

    /// The type as held in a tuple: integers keep their width (a tuple is
    /// packed as a C struct of its elements, as bpftrace lays it out, so
    /// `((int8)1, (int16)1, (int32)1)` is 8 bytes), other values as stored.
    pub fn in_tuple(&self) -> Type {
        match self {
            Type::Int { .. } | Type::Enum { .. } => self.clone(),
            other => other.stored(),
        }
    }

    /// Memory layout of a stored value of this type.
    pub fn layout(&self) -> Layout {
        match self {
            Type::Int { size, signed } => Layout::Int {
                size: *size,
                signed: *signed,
            },
            Type::Enum { size, def } => Layout::Enum {
                size: *size,
                def: def.clone(),
            },
            Type::Str { size } => Layout::Str { size: *size },
            Type::Bool => Layout::Bool,
            Type::Pointer { .. } => Layout::Pointer,
            Type::Inet => Layout::Inet,
            Type::Named(table) => Layout::Named(*table),
            Type::MacAddr => Layout::MacAddr,
            Type::Tuple(ts) => Layout::tuple(ts.iter().map(Type::layout)),
            Type::Record(fs) => Layout::record(fs.iter().map(|(n, t)| (n.clone(), t.layout()))),
            Type::Array { elem, len } => Layout::Array {
                elem: Box::new(elem.layout()),
                len: *len,
            },
            Type::Stack {
                user: false,
                mode,
                limit,
            } => Layout::KStack {
                mode: *mode,
                limit: *limit,
            },
            Type::Stack {
                user: true,
                mode,
                limit,
            } => Layout::UStack {
                mode: *mode,
                limit: *limit,
            },
            Type::Sym { user: false } => Layout::KSym,
            Type::Sym { user: true } => Layout::USym,
            Type::Buf { size } => Layout::Buffer { size: *size },
            Type::Timestamp { format } => Layout::Timestamp { format: *format },
            Type::CgroupPath => Layout::CgroupPath,
            Type::Struct {
                layout: Some(l), ..
            } => (**l).clone(),
            Type::Agg(_)
            | Type::TracepointArgs
            | Type::StreamArgs(_)
            | Type::Void
            | Type::Struct { .. } => Layout::None,
        }
    }

    /// The common type two stored values can both be kept as, if any
    /// (`string[4]` and `string[16]` give `string[16]`).
    pub fn unify(&self, other: &Type) -> Option<Type> {
        match (self, other) {
            // The same pointer type stays typed (a `$sk = (struct sock *)arg0`
            // checked again keeps its `->`).
            (Type::Pointer { .. } | Type::Int { .. } | Type::Enum { .. }, _) if self == other => {
                Some(self.clone())
            }
            // Qualifiers at any level do not change what a pointer reads
            // (`const struct timespec *` from one tracepoint and
            // `struct timespec *` from another): the first spelling stays.
            (Type::Pointer { c_type: a }, Type::Pointer { c_type: b })
                if crate::ctypes::without_qualifiers(a) == crate::ctypes::without_qualifiers(b) =>
            {
                Some(self.clone())
            }
            // An enum meets an integer or another enum as an unsigned integer.
            (Type::Enum { .. }, Type::Int { .. } | Type::Enum { .. })
            | (Type::Int { .. }, Type::Enum { .. }) => Some(Type::Int {
                size: 8,
                signed: self.is_signed() || other.is_signed(),
            }),
            (Type::Int { signed: a, .. }, Type::Int { signed: b, .. }) => Some(Type::Int {
                size: 8,
                signed: *a || *b,
            }),
            (Type::Int { .. } | Type::Pointer { .. }, Type::Int { .. } | Type::Pointer { .. }) => {
                Some(Type::U64)
            }
            // A boolean kept where integers are (`$x = 1; $x = $y > 2;`).
            (Type::Bool, Type::Int { .. }) => Some(other.clone()),
            (Type::Int { .. }, Type::Bool) => Some(self.clone()),
            (Type::Str { size: a }, Type::Str { size: b }) => {
                Some(Type::Str { size: (*a).max(*b) })
            }
            // A buffer holds its length: a shorter one fits in a longer one.
            (Type::Buf { size: a }, Type::Buf { size: b }) => {
                Some(Type::Buf { size: (*a).max(*b) })
            }
            (Type::Tuple(a), Type::Tuple(b)) if a.len() == b.len() => a
                .iter()
                .zip(b)
                .map(|(x, y)| x.unify(y))
                .collect::<Option<Vec<_>>>()
                .map(Type::Tuple),
            // Fields match by name, in the order of the first (bpftrace:
            // `(a=1, b=2)` and `(b=3, a=4)` are one record type).
            (Type::Record(a), Type::Record(b)) if a.len() == b.len() => a
                .iter()
                .map(|(n, x)| {
                    let (_, y) = b.iter().find(|(m, _)| m == n)?;
                    x.unify(y).map(|t| (n.clone(), t))
                })
                .collect::<Option<Vec<_>>>()
                .map(Type::Record),
            (Type::Agg(a), Type::Agg(b)) => agg_unify(a, b).map(Type::Agg),
            (a, b) if a == b => Some(a.clone()),
            _ => None,
        }
    }
}

fn agg_unify(a: &Aggregation, b: &Aggregation) -> Option<Aggregation> {
    use Aggregation::*;
    Some(match (a, b) {
        (Count, Count) => Count,
        (Hist { bits: x }, Hist { bits: y }) if x == y => Hist { bits: *x },
        (Sum { signed: x }, Sum { signed: y }) => Sum { signed: *x || *y },
        (Min { signed: x }, Min { signed: y }) => Min { signed: *x || *y },
        (Max { signed: x }, Max { signed: y }) => Max { signed: *x || *y },
        (Avg { signed: x }, Avg { signed: y }) => Avg { signed: *x || *y },
        (Stats { signed: x }, Stats { signed: y }) => Stats { signed: *x || *y },
        (l @ Lhist { .. }, r @ Lhist { .. }) if l == r => l.clone(),
        (
            Tseries {
                interval_ns,
                intervals,
                agg,
                signed: x,
            },
            Tseries {
                interval_ns: i,
                intervals: n,
                agg: g,
                signed: y,
            },
        ) if (interval_ns, intervals, agg) == (i, n, g) => Tseries {
            interval_ns: *interval_ns,
            intervals: *intervals,
            agg: *agg,
            signed: *x || *y,
        },
        _ => return None,
    })
}

/// Written like bpftrace writes types in its messages (`int64`, `string[16]`).
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Int { size, signed } => {
                write!(f, "{}int{}", if *signed { "" } else { "u" }, size * 8)
            }
            Type::Enum { def, .. } => write!(f, "enum {}", def.name),
            Type::Str { size } => write!(f, "string[{size}]"),
            Type::Bool => f.write_str("bool"),
            Type::Pointer { c_type } => write!(f, "{c_type}"),
            Type::Inet => f.write_str("inet"),
            Type::Named(abi::NameTable::Errno) => f.write_str("strerror_t"),
            Type::Named(abi::NameTable::Signal) => f.write_str("signal_name_t"),
            Type::Named(abi::NameTable::Syscall) => f.write_str("syscall_name_t"),
            Type::Named(abi::NameTable::User) => f.write_str("username_t"),
            Type::MacAddr => f.write_str("macaddr_t"),
            Type::Tuple(ts) => {
                f.write_str("(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
            Type::Record(fs) => {
                f.write_str("record(")?;
                for (i, (n, t)) in fs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{n}={t}")?;
                }
                f.write_str(")")
            }
            Type::Array { elem, len } => write!(f, "{elem}[{len}]"),
            Type::Agg(a) => write!(f, "{}_t", a.name()),
            Type::TracepointArgs | Type::StreamArgs(_) => f.write_str("args"),
            Type::Void => f.write_str("void"),
            Type::Stack { user, mode, limit } => write!(
                f,
                "{}stack({}, {limit})",
                if *user { "u" } else { "k" },
                mode.name()
            ),
            Type::Sym { user } => f.write_str(if *user { "usym" } else { "ksym" }),
            Type::Struct { c_type, .. } => f.write_str(c_type),
            Type::Buf { size } => write!(f, "buffer[{size}]"),
            Type::Timestamp { .. } => f.write_str("timestamp"),
            Type::CgroupPath => f.write_str("cgroup_path_t"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_like_bpftrace() {
        assert_eq!(Type::I64.to_string(), "int64");
        assert_eq!(Type::U32.to_string(), "uint32");
        assert_eq!(Type::Str { size: 16 }.to_string(), "string[16]");
        assert_eq!(
            Type::Tuple(vec![Type::I64, Type::Str { size: 2 }]).to_string(),
            "(int64, string[2])"
        );
    }

    #[test]
    fn unify_widens() {
        let a = Type::Str { size: 4 };
        let b = Type::Str { size: 16 };
        assert_eq!(a.unify(&b), Some(b.clone()));
        assert_eq!(Type::U32.unify(&Type::I64), Some(Type::I64));
        let sock = Type::Pointer {
            c_type: "struct sock *".into(),
        };
        assert_eq!(sock.unify(&sock), Some(sock.clone()));
        // Different pointers, or a pointer and an integer, meet as an address.
        let file = Type::Pointer {
            c_type: "struct file *".into(),
        };
        assert_eq!(sock.unify(&file), Some(Type::U64));
        // Qualifiers do not make pointers differ, at any level.
        let const_sock = Type::Pointer {
            c_type: "const struct sock*".into(),
        };
        assert_eq!(const_sock.unify(&sock), Some(const_sock.clone()));
        assert_eq!(sock.unify(&const_sock), Some(sock.clone()));
        let argv = Type::Pointer {
            c_type: "const char *const *".into(),
        };
        let plain_argv = Type::Pointer {
            c_type: "char **".into(),
        };
        assert_eq!(argv.unify(&plain_argv), Some(argv.clone()));
        assert_eq!(argv.unify(&const_sock), Some(Type::U64));
        assert_eq!(sock.unify(&Type::I64), Some(Type::U64));
        assert_eq!(a.unify(&Type::I64), None);
        assert_eq!(
            Type::Agg(Aggregation::Count).unify(&Type::Agg(Aggregation::Hist { bits: 0 })),
            None
        );
    }
}
