//! Built-in functions. The argument checks live in `check.rs` next to the
//! other expression rules; this table names them and gives their result types.

use abi::Aggregation;

/// A built-in function weft compiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Function {
    /// An aggregation assigned to a map: `@x = count()`.
    Aggregate(Aggregation),
    /// `str(ptr[, len])`: read a NUL-terminated string.
    Str,
    /// `buf(ptr[, len])`: read `len` raw bytes, printed by `%r`.
    Buf,
    /// `ntop([af, ]addr)`: an IPv4/IPv6 address as text.
    Ntop,
    /// `kstack([mode][, limit])` / `ustack(...)`: see `builtins::stacks`.
    Stack { user: bool },
    /// `ksym(addr)` / `usym(addr)`: see `builtins::stacks`.
    Sym { user: bool },
    /// `strftime(fmt, ns)`: a time printed in format `format` (an index of
    /// the script's time formats); the value is the `ns` argument.
    Strftime { format: u32 },
}

/// Every function name weft knows, for suggestions.
pub const FUNCTION_NAMES: &[&str] = &[
    "count", "sum", "avg", "min", "max", "stats", "hist", "lhist", "str", "delete", "clear",
    "zero", "print", "printf", "exit", "time", "join", "ntop", "emit", "kstack", "ustack", "ksym",
    "usym", "uaddr", "bswap", "cat", "buf", "reg", "strftime",
];

/// Functions of bpftrace that weft recognises but does not compile yet.
const PLANNED: &[&str] = &[
    "kaddr",
    "system",
    "signal",
    "override",
    "cgroupid",
    "macaddr",
    "path",
    "strncmp",
    "strcontains",
    "has_key",
    "len",
    "sizeof",
    "kptr",
    "uptr",
    "unwatch",
    "skboutput",
    "pton",
    "offsetof",
    "errorf",
    "warnf",
    "debugf",
    "percpu_kaddr",
    "socket_cookie",
    "fail",
    "tseries",
    "nsecs",
];

pub fn function(name: &str) -> Option<Function> {
    Some(match name {
        "count" => Function::Aggregate(Aggregation::Count),
        "sum" => Function::Aggregate(Aggregation::Sum { signed: false }),
        "avg" => Function::Aggregate(Aggregation::Avg { signed: false }),
        "min" => Function::Aggregate(Aggregation::Min { signed: false }),
        "max" => Function::Aggregate(Aggregation::Max { signed: false }),
        "stats" => Function::Aggregate(Aggregation::Stats { signed: false }),
        "hist" => Function::Aggregate(Aggregation::Hist),
        "lhist" => Function::Aggregate(Aggregation::Lhist {
            min: 0,
            max: 0,
            step: 1,
        }),
        "str" => Function::Str,
        "buf" => Function::Buf,
        "ntop" => Function::Ntop,
        "kstack" => Function::Stack { user: false },
        "ustack" => Function::Stack { user: true },
        "ksym" => Function::Sym { user: false },
        "usym" => Function::Sym { user: true },
        _ => return None,
    })
}

pub fn planned_function(name: &str) -> bool {
    PLANNED.contains(&name)
}
