//! The value model: what a decoded BPF value or map is, independent of how
//! it is printed.

/// One decoded value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    UInt(u64),
    /// The bytes of a string up to (not including) its first NUL. Kept as
    /// bytes because kernel strings need not be UTF-8 and bpftrace prints
    /// them byte for byte.
    Str(Vec<u8>),
    Bool(bool),
    /// A value of a C enum type: printed as its enumerator's `name` in
    /// text (the number where no enumerator has it), as the number in JSON.
    Enum {
        value: u64,
        name: Option<String>,
    },
    Pointer(u64),
    Tuple(Vec<Value>),
    /// Named fields (a record, a C struct or union held by value), printed
    /// `{ .a = 1, .b = 2 }`.
    Record(Vec<(String, Value)>),
    /// A C array held by value, printed `[1,2,3]`.
    Array(Vec<Value>),
    /// Opaque bytes (`buf()`), printed like bpftrace's `hex_format_buffer`.
    Bytes(Vec<u8>),
    /// No value (a type bpftrace cannot show, such as a `float` member):
    /// `null`.
    None,
    /// `kstack`/`ustack` (frames filled in by [`crate::stack::resolve_value`]).
    Stack(Box<crate::stack::Stack>),
    /// `ksym(addr)`/`usym(addr)`.
    Sym(crate::stack::SymValue),
    /// `cgroup_path(id)` (its paths filled in by [`crate::stack::resolve_value`]).
    CgroupPath(crate::stack::CgroupPathValue),
    /// `strftime(fmt, ns)` (its text filled in by [`crate::stack::resolve_value`]).
    Timestamp(crate::stack::TimestampValue),
    /// `username` (its name filled in by [`crate::stack::resolve_value`]).
    User(crate::stack::UserValue),
}

impl Value {
    /// A string value from text (convenience for callers and tests).
    pub fn str(text: &str) -> Value {
        Value::Str(text.as_bytes().to_vec())
    }

    /// The value as a 64-bit pattern, for printf's integer conversions.
    pub fn as_bits(&self) -> u64 {
        match self {
            Value::Int(v) => *v as u64,
            Value::UInt(v) | Value::Pointer(v) | Value::Enum { value: v, .. } => *v,
            Value::Bool(b) => u64::from(*b),
            _ => 0,
        }
    }
}

/// A signed or unsigned 64-bit integer, for aggregations whose signedness
/// follows the aggregated expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integer {
    Signed(i64),
    Unsigned(u64),
}

impl Integer {
    /// Divides like bpftrace's `value / div` with C integer promotion
    /// (`div` is unsigned 32-bit there, so signed values stay signed).
    pub fn divided(self, div: u64) -> Integer {
        let div = div.max(1);
        match self {
            Integer::Signed(v) => Integer::Signed((i128::from(v) / i128::from(div)) as i64),
            Integer::Unsigned(v) => Integer::Unsigned(v / div),
        }
    }

    /// Order used when sorting maps by value.
    pub(crate) fn sort_key(self) -> i128 {
        match self {
            Integer::Signed(v) => i128::from(v),
            Integer::Unsigned(v) => i128::from(v),
        }
    }
}

impl std::fmt::Display for Integer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Integer::Signed(v) => write!(f, "{v}"),
            Integer::Unsigned(v) => write!(f, "{v}"),
        }
    }
}

/// What kind of map a [`MapDump`] is; decides the layout of its printout
/// even when it has no entries (an empty stats map still prints two newlines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    Plain,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    Stats,
    Hist,
    Lhist {
        min: i64,
        max: i64,
        step: i64,
    },
    /// `tseries()`: each entry a graph of its intervals.
    Tseries,
}

impl MapKind {
    pub fn is_hist(self) -> bool {
        matches!(self, MapKind::Hist | MapKind::Lhist { .. })
    }

    /// bpftrace prints avg and stats maps through its "stats" path.
    pub fn is_stats(self) -> bool {
        matches!(self, MapKind::Avg | MapKind::Stats)
    }
}

/// The merged (over CPUs) value of one map entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapEntryValue {
    Plain(Value),
    Count(u64),
    Sum(Integer),
    Min(Integer),
    Max(Integer),
    /// `avg()`: printed as `total / count`.
    Avg {
        count: u64,
        total: i64,
    },
    Stats {
        count: u64,
        total: i64,
    },
    /// `hist()` buckets: index 0 negative, 1 zero, `k + 2` for `[2^k, 2^(k+1))`.
    Hist(Vec<u64>),
    /// `lhist()` buckets: index 0 below `min`, `1..=n` the steps, `n + 1` at or above `max`.
    Lhist {
        min: i64,
        max: i64,
        step: i64,
        buckets: Vec<u64>,
    },
    /// `tseries()`: the value of each interval kept.
    Tseries(TseriesValue),
}

/// The intervals of one `tseries()` entry, merged over CPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TseriesValue {
    /// The length of an interval; epoch `e` starts at `e * interval_ns` (TAI).
    pub interval_ns: u64,
    /// How many intervals are kept (the last `intervals` epochs are shown).
    pub intervals: u32,
    /// The value of each epoch kept, by epoch.
    pub values: std::collections::BTreeMap<u64, Integer>,
}

impl TseriesValue {
    /// The latest epoch with a value (0 without any): what entries sort
    /// by, and, over a map's entries, where the intervals shown end.
    pub fn latest_epoch(&self) -> u64 {
        self.values.keys().next_back().copied().unwrap_or(0)
    }
}

/// bpftrace's average: C integer division of the signed total by the count,
/// 0 for an empty (zeroed) entry.
pub fn average(count: u64, total: i64) -> i64 {
    let count = count as i64;
    if count == 0 {
        0
    } else {
        total.wrapping_div(count)
    }
}

/// One entry of a map: its key arguments (empty for a keyless map) and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapEntry {
    pub key: Vec<Value>,
    pub value: MapEntryValue,
}

/// A snapshot of one map, with entries already in bpftrace's print order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapDump {
    /// As written in the script, with `@` (`@x`, or `@` alone).
    pub name: String,
    pub kind: MapKind,
    /// Whether the map is indexed (`@x[k]`); keyless maps print without `[...]`.
    pub keyed: bool,
    pub entries: Vec<MapEntry>,
}
