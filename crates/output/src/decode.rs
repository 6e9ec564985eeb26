//! Bytes from BPF maps and ring-buffer records into [`Value`]s, following
//! the `abi` layouts. Short or garbage input never panics: missing bytes
//! read as zero.

use std::cmp::Ordering;

use abi::{Aggregation, Layout, MapSpec, MapValue, hist_buckets};

use crate::value::{Integer, MapDump, MapEntry, MapEntryValue, MapKind, Value, average};

/// bpftrace never keeps more lhist buckets than this (1000 steps plus the
/// two out-of-range ones); also bounds what garbage specs can allocate.
const MAX_LHIST_BUCKETS: usize = 1002;

/// No value weft writes holds a longer array (a BPF value is at most a
/// page or so); also bounds what garbage specs can allocate.
const MAX_ARRAY_LEN: usize = 1 << 16;

/// What follows a string that fills its buffer without a NUL: bpftrace's
/// sign that `str()` cut it (`str_trunc_trailer`, `..` by default). One
/// setting for the process, made once the script's config is known
/// ([`set_string_trailer`]), so every decoder (printf arguments, map keys
/// and values, stream fields; text and JSON alike) marks such strings.
static STRING_TRAILER: std::sync::RwLock<Vec<u8>> = std::sync::RwLock::new(Vec::new());
/// Whether [`STRING_TRAILER`] was set (until then the default, `..`).
static STRING_TRAILER_SET: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Sets what follows a string cut at its size (`str_trunc_trailer`).
pub fn set_string_trailer(trailer: &[u8]) {
    if let Ok(mut t) = STRING_TRAILER.write() {
        *t = trailer.to_vec();
        STRING_TRAILER_SET.store(true, std::sync::atomic::Ordering::Release);
    }
}

fn string_trailer() -> Vec<u8> {
    if !STRING_TRAILER_SET.load(std::sync::atomic::Ordering::Acquire) {
        return b"..".to_vec();
    }
    STRING_TRAILER
        .read()
        .map_or_else(|_| b"..".to_vec(), |t| t.clone())
}

/// Decodes one value laid out as `layout` at the start of `bytes`.
pub fn decode(layout: &Layout, bytes: &[u8]) -> Value {
    match layout {
        Layout::Int { size, signed } => {
            let raw = read_uint(bytes, usize::from(*size).min(8));
            if *signed {
                Value::Int(sign_extend(raw, usize::from(*size).min(8)))
            } else {
                Value::UInt(raw)
            }
        }
        Layout::Bits { size, shift, width } => {
            let raw = read_uint(bytes, usize::from(*size).min(8)) >> shift;
            Value::UInt(if *width >= 64 {
                raw
            } else {
                raw & ((1u64 << width) - 1)
            })
        }
        Layout::Enum { size, def } => {
            let value = read_uint(bytes, usize::from(*size).min(8));
            Value::Enum {
                value,
                name: def.name_of(value).map(str::to_string),
            }
        }
        Layout::Str { size } => {
            let buf = field(bytes, 0, *size as usize);
            match buf.iter().position(|&b| b == 0) {
                Some(end) => Value::Str(buf[..end].to_vec()),
                // No NUL: a string `str()` cut at its size (see `set_string_trailer`).
                None if buf.len() == *size as usize && *size > 0 => {
                    let mut text = buf.to_vec();
                    text.extend_from_slice(&string_trailer());
                    Value::Str(text)
                }
                None => Value::Str(buf.to_vec()),
            }
        }
        Layout::Bool => Value::Bool(bytes.first().is_some_and(|&b| b != 0)),
        Layout::Pointer => Value::Pointer(read_uint(bytes, 8)),
        Layout::Tuple { fields, .. } => Value::Tuple(
            fields
                .iter()
                .map(|f| decode(&f.layout, field(bytes, f.offset as usize, usize::MAX)))
                .collect(),
        ),
        Layout::Record { fields, .. } => Value::Record(
            fields
                .iter()
                .map(|f| {
                    let v = decode(&f.layout, field(bytes, f.offset as usize, usize::MAX));
                    (f.name.clone(), v)
                })
                .collect(),
        ),
        Layout::Array { elem, len } => {
            let step = elem.size() as usize;
            // Garbage specs must not allocate without bound.
            let len = (*len as usize).min(MAX_ARRAY_LEN);
            Value::Array(
                (0..len)
                    .map(|i| decode(elem, field(bytes, i * step, usize::MAX)))
                    .collect(),
            )
        }
        Layout::Inet => Value::Str(inet_text(bytes).into_bytes()),
        Layout::Named(abi::NameTable::User) => Value::User(crate::stack::UserValue {
            uid: read_uint(bytes, 4) as u32,
            name: None,
        }),
        Layout::Named(table) => {
            // Read as a C `int`, as bpftrace's tables are indexed.
            let n = bytes
                .get(..4)
                .map_or(0, |b| i32::from_le_bytes(b.try_into().unwrap_or_default()));
            let n = i64::from(n);
            Value::Str(match table {
                abi::NameTable::Errno => crate::names::errno_text(n).as_bytes().to_vec(),
                abi::NameTable::Signal => crate::names::signal_text(n).into_bytes(),
                abi::NameTable::Syscall => crate::names::syscall_text(n).as_bytes().to_vec(),
                abi::NameTable::User => n.to_string().into_bytes(),
            })
        }
        Layout::MacAddr => Value::Str(mac_text(bytes).into_bytes()),
        Layout::Bytes { size } => Value::Bytes(field(bytes, 0, *size as usize).to_vec()),
        // Formatted by a resolver, which knows the clocks (see `Layout::Timestamp`).
        Layout::Timestamp { format } => Value::Timestamp(crate::stack::TimestampValue {
            ns: read_uint(bytes, 8),
            format: *format,
            text: None,
        }),
        Layout::Buffer { size } => {
            let len = field(bytes, 0, 4);
            let len = u32::from_le_bytes([
                len.first().copied().unwrap_or(0),
                len.get(1).copied().unwrap_or(0),
                len.get(2).copied().unwrap_or(0),
                len.get(3).copied().unwrap_or(0),
            ]);
            let data = field(bytes, 4, *size as usize);
            Value::Bytes(data[..(len as usize).min(data.len())].to_vec())
        }
        Layout::None => Value::None,
        Layout::KStack { mode, limit } | Layout::UStack { mode, limit } => {
            let user = matches!(layout, Layout::UStack { .. });
            Value::Stack(Box::new(crate::stack::Stack {
                user,
                mode: *mode,
                limit: *limit,
                id: read_uint(bytes, 8) as i64,
                pid: if user {
                    read_uint(field(bytes, 8, 8), 8) as u32
                } else {
                    0
                },
                frames: Vec::new(),
            }))
        }
        Layout::CgroupPath => Value::CgroupPath(crate::stack::CgroupPathValue {
            id: read_uint(bytes, 8),
            filter: read_uint(field(bytes, 8, 8), 8) as u32,
            path: None,
        }),
        Layout::KSym | Layout::USym => Value::Sym(crate::stack::SymValue {
            user: matches!(layout, Layout::USym),
            addr: read_uint(bytes, 8),
            pid: read_uint(field(bytes, 8, 8), 8) as u32,
            name: None,
        }),
    }
}

/// Decodes a map key into its arguments (`@m[a, b]` has a tuple key whose
/// fields are the arguments).
pub fn decode_key(layout: Option<&Layout>, bytes: &[u8]) -> Vec<Value> {
    match layout {
        None => Vec::new(),
        Some(Layout::Tuple { fields, .. }) => fields
            .iter()
            .map(|f| decode(&f.layout, field(bytes, f.offset as usize, usize::MAX)))
            .collect(),
        Some(layout) => vec![decode(layout, bytes)],
    }
}

/// Decodes every entry of a map and puts them in the order bpftrace prints
/// them. `entries` holds, per key, one value buffer per CPU for per-CPU
/// (aggregation) maps or a single buffer for plain maps, in the order the
/// kernel iterated them (bpftrace's tie order).
pub fn decode_map(spec: &MapSpec, entries: &[(Vec<u8>, Vec<Vec<u8>>)]) -> MapDump {
    decode_map_with(spec, entries, false)
}

/// [`decode_map`], knowing whether `zero()` kept this keyless map's entry.
///
/// A keyless aggregation may live in a one-entry array whose entry always
/// exists: all-zero values then mean "never fired", and it prints like a
/// missing entry (nothing; sum() excepted: its zero is a value). bpftrace
/// keeps a zeroed entry, so after `zero()` of a map that had fired
/// (`zeroed`), zeros print.
pub fn decode_map_with(
    spec: &MapSpec,
    entries: &[(Vec<u8>, Vec<Vec<u8>>)],
    zeroed: bool,
) -> MapDump {
    let kind = map_kind(&spec.value);
    let mut decoded: Vec<(&[u8], MapEntry)> = entries
        .iter()
        .filter(|(_, per_cpu)| spec.key.is_some() || zeroed || fired(&spec.value, per_cpu))
        .map(|(key, per_cpu)| {
            let entry = MapEntry {
                key: decode_key(spec.key.as_ref(), key),
                value: merge_value(&spec.value, per_cpu),
            };
            (key.as_slice(), entry)
        })
        .collect();
    sort_for_print(spec, &mut decoded);
    MapDump {
        name: spec.name.clone(),
        kind,
        keyed: spec.key.is_some(),
        entries: decoded.into_iter().map(|(_, e)| e).collect(),
    }
}

/// Whether an aggregation value has seen an event: count() and sum() always
/// count as seen; the others hold a non-zero word once they have one (avg and
/// stats a count, min and max a `set` word, hist and lhist a bucket).
fn fired<B: AsRef<[u8]>>(value: &MapValue, per_cpu: &[B]) -> bool {
    always_fired(value) || per_cpu.iter().any(|cpu| any_nonzero(cpu.as_ref()))
}

/// sum() (and plain values) count as seen even when zero: a sum is never
/// kept in an array, so an entry is one that was written. A count() is
/// never zero once it has fired (unless `zero()` kept it).
fn always_fired(value: &MapValue) -> bool {
    matches!(
        value,
        MapValue::Plain(_) | MapValue::Agg(Aggregation::Sum { .. })
    )
}

fn any_nonzero(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| b != 0)
}

/// The [`MapKind`] of a map's value.
pub fn map_kind(value: &MapValue) -> MapKind {
    match value {
        MapValue::Plain(_) => MapKind::Plain,
        MapValue::Agg(agg) => match *agg {
            Aggregation::Count => MapKind::Count,
            Aggregation::Sum { .. } => MapKind::Sum,
            Aggregation::Min { .. } => MapKind::Min,
            Aggregation::Max { .. } => MapKind::Max,
            Aggregation::Avg { .. } => MapKind::Avg,
            Aggregation::Stats { .. } => MapKind::Stats,
            Aggregation::Hist { .. } => MapKind::Hist,
            Aggregation::Lhist { min, max, step } => MapKind::Lhist { min, max, step },
            Aggregation::Tseries { .. } => MapKind::Tseries,
        },
    }
}

/// Merges the per-CPU buffers of one entry.
pub fn merge_value<B: AsRef<[u8]>>(value: &MapValue, per_cpu: &[B]) -> MapEntryValue {
    let agg = match value {
        MapValue::Plain(layout) => {
            let bytes = per_cpu.first().map_or(&[][..], AsRef::as_ref);
            return MapEntryValue::Plain(decode(layout, bytes));
        }
        MapValue::Agg(agg) => agg,
    };
    let word = |cpu: &B, index: usize| word_at(cpu.as_ref(), index);
    let sum_words = |index: usize| {
        per_cpu
            .iter()
            .fold(0u64, |acc, cpu| acc.wrapping_add(word(cpu, index)))
    };
    let integer = |signed: bool, bits: u64| {
        if signed {
            Integer::Signed(bits as i64)
        } else {
            Integer::Unsigned(bits)
        }
    };
    // Only CPUs that saw a value take part; none at all (after `zero()`) prints 0.
    let extreme = |signed: bool, pick_max: bool| {
        let seen = per_cpu
            .iter()
            .filter(|cpu| word(cpu, 1) != 0)
            .map(|cpu| word(cpu, 0));
        let best = if signed {
            let values = seen.map(|bits| bits as i64);
            let best = if pick_max { values.max() } else { values.min() };
            best.unwrap_or(0) as u64
        } else if pick_max {
            seen.max().unwrap_or(0)
        } else {
            seen.min().unwrap_or(0)
        };
        integer(signed, best)
    };
    match *agg {
        Aggregation::Count => MapEntryValue::Count(sum_words(0)),
        Aggregation::Sum { signed } => MapEntryValue::Sum(integer(signed, sum_words(0))),
        Aggregation::Min { signed } => MapEntryValue::Min(extreme(signed, false)),
        Aggregation::Max { signed } => MapEntryValue::Max(extreme(signed, true)),
        Aggregation::Avg { .. } => MapEntryValue::Avg {
            count: sum_words(0),
            total: sum_words(1) as i64,
        },
        Aggregation::Stats { .. } => MapEntryValue::Stats {
            count: sum_words(0),
            total: sum_words(1) as i64,
        },
        Aggregation::Hist { bits } => {
            MapEntryValue::Hist((0..hist_buckets(bits) as usize).map(sum_words).collect())
        }
        Aggregation::Lhist { min, max, step } => MapEntryValue::Lhist {
            min,
            max,
            step,
            buckets: (0..lhist_count(min, max, step)).map(sum_words).collect(),
        },
        Aggregation::Tseries { .. } => {
            MapEntryValue::Tseries(crate::tseries::merge_value(agg, per_cpu))
        }
    }
}

/// The number of lhist buckets decoded.
fn lhist_count(min: i64, max: i64, step: i64) -> usize {
    // Not `Aggregation::lhist_buckets`: a garbage step of 0 must not panic.
    let steps = max.wrapping_sub(min).checked_div(step).unwrap_or(0);
    usize::try_from(steps.saturating_add(2))
        .unwrap_or(0)
        .min(MAX_LHIST_BUCKETS)
}

/// Word `index` (8 bytes, little-endian) of a value; missing bytes are zero.
fn word_at(bytes: &[u8], index: usize) -> u64 {
    read_uint(field(bytes, index * 8, 8), 8)
}

/// The size of one value merged over CPUs by [`merge_into`], for a map whose
/// (per-CPU) values are `value_size` bytes: the words [`merge_value`] reads.
pub fn merged_value_size(value: &MapValue, value_size: usize) -> usize {
    let words = match value {
        MapValue::Plain(_) => return value_size,
        MapValue::Agg(Aggregation::Count | Aggregation::Sum { .. }) => 1,
        MapValue::Agg(
            Aggregation::Min { .. }
            | Aggregation::Max { .. }
            | Aggregation::Avg { .. }
            | Aggregation::Stats { .. },
        ) => 2,
        MapValue::Agg(Aggregation::Hist { bits }) => hist_buckets(*bits) as usize,
        MapValue::Agg(Aggregation::Lhist { min, max, step }) => lhist_count(*min, *max, *step),
        MapValue::Agg(agg @ Aggregation::Tseries { .. }) => return agg.value_size() as usize,
    };
    words * 8
}

/// Merges the per-CPU buffers of one entry into one buffer `out` of
/// [`merged_value_size`] bytes, such that `merge_value(value, &[out])` equals
/// `merge_value(value, per_cpu)`: plain values keep the first CPU's bytes,
/// min/max keep the extreme of the CPUs that saw a value (and a `set` word),
/// every other aggregation sums its words. Returns whether the entry has
/// fired (see `decode_map_with`).
pub fn merge_into<'a>(
    value: &MapValue,
    per_cpu: impl IntoIterator<Item = &'a [u8]>,
    out: &mut [u8],
) -> bool {
    out.fill(0);
    let mut per_cpu = per_cpu.into_iter();
    let agg = match value {
        MapValue::Plain(_) => {
            if let Some(first) = per_cpu.next() {
                let n = first.len().min(out.len());
                out[..n].copy_from_slice(&first[..n]);
            }
            return true;
        }
        MapValue::Agg(agg) => agg,
    };
    let mut fired = always_fired(value);
    match *agg {
        Aggregation::Min { signed } | Aggregation::Max { signed } => {
            let pick_max = matches!(agg, Aggregation::Max { .. });
            let mut best: Option<u64> = None;
            for cpu in per_cpu {
                fired = fired || any_nonzero(cpu);
                if word_at(cpu, 1) == 0 {
                    continue;
                }
                let v = word_at(cpu, 0);
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let v_wins = match (signed, pick_max) {
                            (true, true) => (v as i64) > (b as i64),
                            (true, false) => (v as i64) < (b as i64),
                            (false, true) => v > b,
                            (false, false) => v < b,
                        };
                        if v_wins { v } else { b }
                    }
                });
            }
            if let Some(best) = best {
                put_word(out, 0, best);
                put_word(out, 1, 1);
            }
        }
        Aggregation::Tseries { .. } => {
            let per_cpu: Vec<&[u8]> = per_cpu.collect();
            fired = fired || per_cpu.iter().any(|cpu| any_nonzero(cpu));
            crate::tseries::merge_into(agg, &per_cpu, out);
        }
        _ => {
            let words = out.len() / 8;
            for cpu in per_cpu {
                fired = fired || any_nonzero(cpu);
                for index in 0..words {
                    let sum = word_at(out, index).wrapping_add(word_at(cpu, index));
                    put_word(out, index, sum);
                }
            }
        }
    }
    fired
}

/// [`merge_into`], answering whether `decode_map_with(spec, .., zeroed)`
/// keeps the entry.
pub fn merge_entry<'a>(
    spec: &MapSpec,
    zeroed: bool,
    per_cpu: impl IntoIterator<Item = &'a [u8]>,
    out: &mut [u8],
) -> bool {
    let fired = merge_into(&spec.value, per_cpu, out);
    spec.key.is_some() || zeroed || fired
}

fn put_word(out: &mut [u8], index: usize, value: u64) {
    if let Some(slot) = out.get_mut(index * 8..index * 8 + 8) {
        slot.copy_from_slice(&value.to_le_bytes());
    }
}

/// Puts entries in bpftrace's print order (`BPFtrace::print_map*`):
/// integer-valued maps by value, avg/stats by average and hist/lhist by
/// total count (ties in key-byte order, as bpftrace gathers them in a
/// `std::map`), anything else by key arguments. Sorts are stable so that
/// remaining ties keep the kernel's iteration order, as bpftrace's small
/// `std::sort` does.
fn sort_for_print(spec: &MapSpec, entries: &mut [(&[u8], MapEntry)]) {
    match sort_rule(&spec.value) {
        SortRule::ByValue { key_bytes_first } => {
            if key_bytes_first {
                entries.sort_by(|a, b| a.0.cmp(b.0));
            }
            entries.sort_by_key(|(_, e)| sort_value(&e.value));
        }
        SortRule::ByKeyArguments => sort_by_key_arguments(spec.key.as_ref(), entries),
    }
}

/// How [`sort_for_print`] orders a map's entries.
pub(crate) enum SortRule {
    /// By [`sort_value`], ties first put in key-byte order when `key_bytes_first`.
    ByValue { key_bytes_first: bool },
    /// By key arguments (bpftrace's `sort_by_key`).
    ByKeyArguments,
}

pub(crate) fn sort_rule(value: &MapValue) -> SortRule {
    match value {
        MapValue::Plain(Layout::Int { .. }) | MapValue::Agg(_) => SortRule::ByValue {
            key_bytes_first: matches!(
                value,
                MapValue::Agg(
                    Aggregation::Avg { .. }
                        | Aggregation::Stats { .. }
                        | Aggregation::Hist { .. }
                        | Aggregation::Lhist { .. }
                        | Aggregation::Tseries { .. }
                )
            ),
        },
        MapValue::Plain(_) => SortRule::ByKeyArguments,
    }
}

/// The value an entry sorts by when its map sorts by value.
pub(crate) fn sort_value(value: &MapEntryValue) -> Option<i128> {
    match value {
        MapEntryValue::Plain(Value::Int(v)) => Some(i128::from(*v)),
        MapEntryValue::Plain(Value::UInt(v)) => Some(i128::from(*v)),
        MapEntryValue::Count(v) => Some(i128::from(*v)),
        MapEntryValue::Sum(v) | MapEntryValue::Min(v) | MapEntryValue::Max(v) => Some(v.sort_key()),
        MapEntryValue::Avg { count, total } | MapEntryValue::Stats { count, total } => {
            Some(i128::from(average(*count, *total)))
        }
        MapEntryValue::Hist(buckets) | MapEntryValue::Lhist { buckets, .. } => Some(i128::from(
            buckets.iter().fold(0u64, |acc, b| acc.wrapping_add(*b)),
        )),
        // bpftrace shows the least recently written series first.
        MapEntryValue::Tseries(series) => Some(i128::from(series.latest_epoch())),
        _ => None,
    }
}

/// [`sort_value`] of `merge_value(value, &[merged])`, without building the
/// buckets of histograms.
pub(crate) fn merged_sort_value(value: &MapValue, merged: &[u8]) -> Option<i128> {
    let buckets = match value {
        MapValue::Agg(Aggregation::Hist { bits }) => hist_buckets(*bits) as usize,
        MapValue::Agg(Aggregation::Lhist { min, max, step }) => lhist_count(*min, *max, *step),
        _ => return sort_value(&merge_value(value, &[merged])),
    };
    Some(i128::from((0..buckets).fold(0u64, |acc, index| {
        acc.wrapping_add(word_at(merged, index))
    })))
}

/// How bpftrace's `sort_by_key` compares argument `index` of two keys
/// (decoded by `key_layout`): integers as signed integers of their size
/// (whatever their type's sign), strings like `strncmp`, anything else
/// equal. Strings and integers are compared without decoding.
pub(crate) fn compare_key_argument(
    key_layout: Option<&Layout>,
    index: usize,
    a: &[u8],
    b: &[u8],
) -> Ordering {
    let (layout, a, b) = match key_layout {
        None => return Ordering::Equal,
        Some(Layout::Tuple { fields, .. }) => match fields.get(index) {
            Some(f) => (
                &f.layout,
                field(a, f.offset as usize, usize::MAX),
                field(b, f.offset as usize, usize::MAX),
            ),
            None => return Ordering::Equal,
        },
        Some(layout) if index == 0 => (layout, a, b),
        Some(_) => return Ordering::Equal,
    };
    match layout {
        Layout::Str { size } => {
            fn text(bytes: &[u8], size: usize) -> &[u8] {
                let buf = field(bytes, 0, size);
                &buf[..buf.iter().position(|&c| c == 0).unwrap_or(buf.len())]
            }
            text(a, *size as usize).cmp(text(b, *size as usize))
        }
        Layout::Int { size, .. } => {
            let size = usize::from(*size).min(8);
            sign_extend(read_uint(a, size), size).cmp(&sign_extend(read_uint(b, size), size))
        }
        _ => Ordering::Equal,
    }
}

/// The number of arguments of a key decoded by `key_layout`.
pub(crate) fn key_arity(key_layout: Option<&Layout>) -> usize {
    match key_layout {
        None => 0,
        Some(Layout::Tuple { fields, .. }) => fields.len(),
        Some(_) => 1,
    }
}

/// bpftrace's `sort_by_key`: stable sorts from the last key argument to the
/// first, each compared as [`compare_key_argument`] says.
fn sort_by_key_arguments(key_layout: Option<&Layout>, entries: &mut [(&[u8], MapEntry)]) {
    for index in (0..key_arity(key_layout)).rev() {
        entries.sort_by(|(a, _), (b, _)| compare_key_argument(key_layout, index, a, b));
    }
}

/// The bytes of `bytes[offset..offset + len]` that exist.
fn field(bytes: &[u8], offset: usize, len: usize) -> &[u8] {
    let start = offset.min(bytes.len());
    let end = offset.saturating_add(len).min(bytes.len());
    &bytes[start..end]
}

/// A little-endian unsigned integer of `size` bytes; missing bytes are zero.
fn read_uint(bytes: &[u8], size: usize) -> u64 {
    let mut buf = [0u8; 8];
    let n = size.min(8).min(bytes.len());
    buf[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(buf)
}

fn sign_extend(raw: u64, size: usize) -> i64 {
    match size {
        1 => raw as u8 as i8 as i64,
        2 => raw as u16 as i16 as i64,
        4 => raw as u32 as i32 as i64,
        _ => raw as i64,
    }
}

/// A `u64` stored little-endian, for tests and callers building buffers.
pub fn le_bytes(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// `macaddr()`'s text: six bytes in upper-case hex, as bpftrace prints them.
fn mac_text(bytes: &[u8]) -> String {
    (0..6)
        .map(|i| format!("{:02X}", bytes.get(i).copied().unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(":")
}

/// `ntop()` text: dotted IPv4 or RFC 5952 IPv6, from `family: u64, addr: [u8; 16]`.
pub fn inet_text(bytes: &[u8]) -> String {
    let family = read_uint(bytes, 8);
    let addr = field(bytes, 8, 16);
    if family == 10 && addr.len() == 16 {
        let mut octets = [0u8; 16];
        octets.copy_from_slice(addr);
        std::net::Ipv6Addr::from(octets).to_string()
    } else if addr.len() >= 4 {
        std::net::Ipv4Addr::new(addr[0], addr[1], addr[2], addr[3]).to_string()
    } else {
        String::new()
    }
}
