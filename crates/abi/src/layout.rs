/// How one value is laid out in BPF memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// A little-endian integer of 1, 2, 4 or 8 bytes.
    Int { size: u8, signed: bool },
    /// A NUL-padded string buffer of `size` bytes (bpftrace's default is 64).
    Str { size: u32 },
    /// A boolean stored as one byte.
    Bool,
    /// An unsigned integer of 1, 2, 4 or 8 bytes whose C type is an enum:
    /// printed as its enumerator's name where one has that value.
    Enum {
        size: u8,
        def: std::sync::Arc<EnumDef>,
    },
    /// A kernel or user address printed as a pointer (`0x...`).
    Pointer,
    /// A bitfield of a C struct held by value: `size` bytes (1, 2, 4, 8)
    /// little-endian from the field's offset, `width` bits of them from bit
    /// `shift`; an unsigned integer, as bpftrace prints it.
    Bits { size: u8, shift: u8, width: u8 },
    /// Fields at fixed offsets; `size` includes trailing padding.
    Tuple { fields: Vec<Field>, size: u32 },
    /// Named fields at fixed offsets (a record `(a = 1, b = "x")` or a C
    /// struct held by value), printed `{ .a = 1, .b = x }`.
    Record { fields: Vec<NamedField>, size: u32 },
    /// `len` values of `elem` one after another (a C array held by value),
    /// printed `[1,2,3]`.
    Array { elem: Box<Layout>, len: u32 },
    /// An IP address from `ntop()`: `family: u64` (AF_INET 2 or AF_INET6 10)
    /// then 16 address bytes (4 used for IPv4), printed as text.
    Inet,
    /// A MAC address from `macaddr()`: 6 bytes, printed `05:04:03:02:01:0A`.
    MacAddr,
    /// Raw bytes printed as-is by nothing (padding, opaque data).
    Bytes { size: u32 },
    /// `buf(ptr, len)`: `len: u32`, then up to `size` bytes (printed by `%r`).
    Buffer { size: u32 },
    /// `strftime(fmt, ns)`: the `u64` nanoseconds of the monotonic clock,
    /// printed as wall-clock time in the format `Manifest::time_formats[format]`.
    Timestamp { format: u32 },
    /// No value (e.g. a map used only as a set).
    None,
    /// `kstack`: the `u64` stack id from `bpf_get_stackid` (see [`crate::stack`]).
    KStack { mode: crate::StackMode, limit: u32 },
    /// `ustack`: `stack_id: u64, pid: u64` (see [`crate::stack`]).
    UStack { mode: crate::StackMode, limit: u32 },
    /// `ksym(addr)`: the `u64` address, printed as the kernel symbol's name.
    KSym,
    /// `usym(addr)`: `addr: u64, pid: u64`, printed as the symbol's name.
    USym,
    /// `cgroup_path(id[, filter])`: `id: u64, filter: u64` (an index of
    /// `Manifest::cgroup_path_filters`), printed as the cgroup's paths.
    CgroupPath,
    /// `strerror(n)`, `signal_name(n)`, `syscall_name(n)`: the `i64` number, printed as its
    /// name from the table.
    Named(NameTable),
}

/// Which names a [`Layout::Named`] number is printed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameTable {
    /// An errno, as `strerror` words it.
    Errno,
    /// A signal, as `strsignal` words it.
    Signal,
    /// A system call number of this machine, as its name (`read`).
    Syscall,
    /// A user id, as its name in `/etc/passwd` (`username`), looked up in
    /// user space when printed.
    User,
}

/// A C enum (the script's or the kernel's): the names of its values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EnumDef {
    /// `Foo` for `enum Foo`; anonymous enums get a name of their place.
    pub name: String,
    /// Each enumerator's value (as the unsigned bits of the enum's width
    /// read back) and name, in the order defined.
    pub variants: Vec<(u64, String)>,
}

impl EnumDef {
    /// The enumerator with this value, if any (the first one defined).
    pub fn name_of(&self, value: u64) -> Option<&str> {
        self.variants
            .iter()
            .find(|(v, _)| *v == value)
            .map(|(_, n)| n.as_str())
    }
}

/// A field of a [`Layout::Tuple`] or of a record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    pub offset: u32,
    pub layout: Layout,
}

/// A field of a [`Layout::Record`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NamedField {
    pub name: String,
    pub offset: u32,
    pub layout: Layout,
}

impl Layout {
    pub fn u64() -> Layout {
        Layout::Int {
            size: 8,
            signed: false,
        }
    }

    pub fn i64() -> Layout {
        Layout::Int {
            size: 8,
            signed: true,
        }
    }

    pub fn size(&self) -> u32 {
        match self {
            Layout::Int { size, .. } | Layout::Enum { size, .. } => *size as u32,
            Layout::Bits { size, .. } => *size as u32,
            Layout::Str { size } | Layout::Bytes { size } => *size,
            Layout::Buffer { size } => 4 + *size,
            Layout::Timestamp { .. } | Layout::Named(_) => 8,
            Layout::Bool => 1,
            Layout::Pointer => 8,
            Layout::Inet => 24,
            Layout::MacAddr => 6,
            Layout::Tuple { size, .. } | Layout::Record { size, .. } => *size,
            Layout::Array { elem, len } => elem.size() * len,
            Layout::None => 0,
            Layout::KStack { .. } | Layout::KSym => 8,
            Layout::UStack { .. } | Layout::USym | Layout::CgroupPath => 16,
        }
    }

    pub fn align(&self) -> u32 {
        match self {
            Layout::Int { size, .. } | Layout::Enum { size, .. } => *size as u32,
            Layout::Pointer | Layout::Inet => 8,
            Layout::Buffer { .. } => 4,
            Layout::Timestamp { .. } | Layout::Named(_) => 8,
            Layout::KStack { .. }
            | Layout::UStack { .. }
            | Layout::KSym
            | Layout::USym
            | Layout::CgroupPath => 8,
            Layout::Tuple { fields, .. } => {
                fields.iter().map(|f| f.layout.align()).max().unwrap_or(1)
            }
            Layout::Record { fields, .. } => {
                fields.iter().map(|f| f.layout.align()).max().unwrap_or(1)
            }
            Layout::Array { elem, .. } => elem.align(),
            // The bytes read for a bitfield may start anywhere.
            Layout::Str { .. }
            | Layout::Bits { .. }
            | Layout::Bytes { .. }
            | Layout::MacAddr
            | Layout::Bool
            | Layout::None => 1,
        }
    }

    /// Lays out `parts` one after another with C alignment rules.
    pub fn tuple(parts: impl IntoIterator<Item = Layout>) -> Layout {
        let mut fields = Vec::new();
        let mut offset = 0u32;
        let mut align = 1u32;
        for layout in parts {
            let a = layout.align().max(1);
            offset = offset.next_multiple_of(a);
            align = align.max(a);
            let size = layout.size();
            fields.push(Field { offset, layout });
            offset += size;
        }
        Layout::Tuple {
            fields,
            size: offset.next_multiple_of(align),
        }
    }

    /// Lays out named `parts` one after another with C alignment rules.
    pub fn record(parts: impl IntoIterator<Item = (String, Layout)>) -> Layout {
        let (names, layouts): (Vec<String>, Vec<Layout>) = parts.into_iter().unzip();
        let Layout::Tuple { fields, size } = Layout::tuple(layouts) else {
            unreachable!("Layout::tuple makes a tuple")
        };
        let fields = names
            .into_iter()
            .zip(fields)
            .map(|(name, f)| NamedField {
                name,
                offset: f.offset,
                layout: f.layout,
            })
            .collect();
        Layout::Record { fields, size }
    }
}

/// Number of `u64` buckets in a `hist()` value: index 0 counts negative
/// values, index 1 counts zero, index `k + 2` counts values in `[2^k, 2^(k+1))`.
pub const HIST_BUCKETS: u32 = 66;

/// The largest `bits` of `hist(n, bits)` (bpftrace's limit).
pub const HIST_MAX_BITS: u8 = 5;

/// Number of `u64` buckets of `hist(n, bits)`, each power of two split in
/// `2^bits`: index 0 counts negative values, `1 + v` counts each `v` below
/// `2^bits`, then `2^bits` buckets per power up to `2^63` (66 for `bits` 0).
pub const fn hist_buckets(bits: u8) -> u32 {
    (65 - bits as u32) * (1 << bits) + 1
}

/// The size of one interval of a `tseries()` value: `value`, `meta`, `epoch + 1`.
pub const TSERIES_SLOT: u32 = 24;

/// The most intervals a `tseries()` keeps: its per-CPU value (all intervals
/// of one key, [`TSERIES_SLOT`] bytes each) must fit the kernel's 32 KiB
/// limit on per-CPU map values.
pub const TSERIES_MAX_INTERVALS: u32 = 32768 / TSERIES_SLOT;

/// How a `tseries()` folds the values of one interval (its 4th argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TseriesAgg {
    /// The last value written in the interval (the default).
    Last,
    Avg,
    Min,
    Max,
    Sum,
}

impl TseriesAgg {
    /// The names the 4th argument takes, as bpftrace lists them.
    pub const NAMES: [&'static str; 4] = ["avg", "max", "min", "sum"];

    pub fn from_name(name: &str) -> Option<TseriesAgg> {
        Some(match name {
            "avg" => TseriesAgg::Avg,
            "max" => TseriesAgg::Max,
            "min" => TseriesAgg::Min,
            "sum" => TseriesAgg::Sum,
            _ => return None,
        })
    }
}

/// The aggregating functions. Their maps are per-CPU hashes; user space
/// merges the per-CPU values. Per-CPU value layouts (all fields `u64`/`i64`):
///
/// | aggregation | value |
/// |---|---|
/// | count | `count: u64` |
/// | sum | `total: i64` (or u64) |
/// | min, max | `value: i64, set: u64` (`set` is 0 on CPUs that never saw a value) |
/// | avg, stats | `count: u64, total: i64` |
/// | hist | `[u64; hist_buckets(bits)]` |
/// | lhist | `[u64; buckets]` with index 0 below `min`, `1..=n` the steps, `n + 1` at or above `max` |
/// | tseries | `[(value: i64, meta: u64, epoch + 1: u64); intervals]`, interval `epoch % intervals`; `meta` is the time written (last value), the count (avg) or whether set (min, max); an interval never written has 0 for `epoch + 1` |
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Aggregation {
    Count,
    Sum {
        signed: bool,
    },
    Min {
        signed: bool,
    },
    Max {
        signed: bool,
    },
    Avg {
        signed: bool,
    },
    Stats {
        signed: bool,
    },
    Hist {
        bits: u8,
    },
    Lhist {
        min: i64,
        max: i64,
        step: i64,
    },
    /// `tseries(n, interval_ns, intervals[, agg])`: time (TAI) divided by
    /// `interval_ns` is the epoch.
    Tseries {
        interval_ns: u64,
        intervals: u32,
        agg: TseriesAgg,
        signed: bool,
    },
}

impl Aggregation {
    /// Size in bytes of one CPU's value.
    pub fn value_size(&self) -> u32 {
        match self {
            Aggregation::Count | Aggregation::Sum { .. } => 8,
            Aggregation::Min { .. }
            | Aggregation::Max { .. }
            | Aggregation::Avg { .. }
            | Aggregation::Stats { .. } => 16,
            Aggregation::Hist { bits } => hist_buckets(*bits) * 8,
            Aggregation::Lhist { .. } => self.lhist_buckets() * 8,
            Aggregation::Tseries { intervals, .. } => intervals * TSERIES_SLOT,
        }
    }

    /// Number of buckets of an `lhist` (including the two out-of-range ones).
    pub fn lhist_buckets(&self) -> u32 {
        match *self {
            Aggregation::Lhist { min, max, step } => ((max - min) / step) as u32 + 2,
            _ => 0,
        }
    }

    /// Whether a probe may read the merged value as a number (`@n > 5`):
    /// `Some(signed)` for count, sum, min, max and avg; `None` for the
    /// aggregations that are only printed.
    pub fn read_signedness(&self) -> Option<bool> {
        match *self {
            Aggregation::Count => Some(false),
            Aggregation::Sum { signed }
            | Aggregation::Min { signed }
            | Aggregation::Max { signed }
            | Aggregation::Avg { signed } => Some(signed),
            Aggregation::Stats { .. }
            | Aggregation::Hist { .. }
            | Aggregation::Lhist { .. }
            | Aggregation::Tseries { .. } => None,
        }
    }

    /// The bpftrace function name.
    pub fn name(&self) -> &'static str {
        match self {
            Aggregation::Count => "count",
            Aggregation::Sum { .. } => "sum",
            Aggregation::Min { .. } => "min",
            Aggregation::Max { .. } => "max",
            Aggregation::Avg { .. } => "avg",
            Aggregation::Stats { .. } => "stats",
            Aggregation::Hist { .. } => "hist",
            Aggregation::Lhist { .. } => "lhist",
            Aggregation::Tseries { .. } => "tseries",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuple_layout_follows_c_alignment() {
        let t = Layout::tuple([
            Layout::Int {
                size: 4,
                signed: true,
            },
            Layout::u64(),
            Layout::Str { size: 3 },
        ]);
        let Layout::Tuple { fields, size } = &t else {
            panic!()
        };
        assert_eq!(
            fields.iter().map(|f| f.offset).collect::<Vec<_>>(),
            [0, 8, 16]
        );
        assert_eq!(*size, 24);
    }

    #[test]
    fn lhist_has_two_out_of_range_buckets() {
        let l = Aggregation::Lhist {
            min: 0,
            max: 100,
            step: 10,
        };
        assert_eq!(l.lhist_buckets(), 12);
        assert_eq!(l.value_size(), 96);
    }
}
