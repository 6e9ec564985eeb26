//! A map held as two flat buffers (keys, and values already merged over CPUs
//! by [`crate::decode::merge_into`]), put in print order by sorting indices
//! and decoded one entry at a time while it is written. Prints the same bytes
//! as [`crate::decode_map_with`] followed by [`crate::Sink::map`], without
//! holding every decoded entry at once.

use std::borrow::Cow;

use abi::MapSpec;

use crate::decode::{
    SortRule, compare_key_argument, decode_key, key_arity, map_kind, merge_value,
    merged_sort_value, sort_rule,
};
use crate::stack::{StackResolver, resolve_value};
use crate::value::{MapDump, MapEntry, MapEntryValue, MapKind};

/// The entries of a map as read: `keys` holds one key of `key_size` bytes
/// per entry and `values` one merged value of `value_size` bytes per entry
/// (see [`crate::decode::merged_value_size`]), in the kernel's iteration order.
#[derive(Clone, Copy, Debug)]
pub struct RawEntries<'a> {
    pub keys: &'a [u8],
    pub key_size: usize,
    pub values: &'a [u8],
    pub value_size: usize,
}

impl<'a> RawEntries<'a> {
    /// The number of entries (those with both a whole key and a whole value).
    pub fn len(&self) -> usize {
        let keys = self.keys.len().checked_div(self.key_size);
        let values = self.values.len().checked_div(self.value_size);
        match (keys, values) {
            (Some(k), Some(v)) => k.min(v),
            (Some(n), None) | (None, Some(n)) => n,
            (None, None) => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn key(&self, index: usize) -> &'a [u8] {
        slot(self.keys, self.key_size, index)
    }

    pub fn value(&self, index: usize) -> &'a [u8] {
        slot(self.values, self.value_size, index)
    }
}

fn slot(buf: &[u8], size: usize, index: usize) -> &[u8] {
    let start = index.saturating_mul(size).min(buf.len());
    let end = start.saturating_add(size).min(buf.len());
    &buf[start..end]
}

/// A map in print order whose entries are decoded (and their stacks and
/// symbols resolved) only when asked for.
pub struct FlatMap<'a> {
    spec: &'a MapSpec,
    raw: RawEntries<'a>,
    /// Indices into `raw`, in bpftrace's print order.
    order: Vec<u32>,
    /// `print()` of a keyless map without an entry shows its zero value.
    zero_when_empty: bool,
    resolver: Option<&'a mut dyn StackResolver>,
}

impl<'a> FlatMap<'a> {
    /// Sorts `raw` for printing. Entries must already be filtered as
    /// [`crate::decode::merge_entry`] says.
    pub fn new(
        spec: &'a MapSpec,
        raw: RawEntries<'a>,
        resolver: Option<&'a mut dyn StackResolver>,
    ) -> FlatMap<'a> {
        let len = u32::try_from(raw.len()).unwrap_or(u32::MAX);
        let mut order: Vec<u32> = (0..len).collect();
        match sort_rule(&spec.value) {
            SortRule::ByValue { key_bytes_first } => {
                if key_bytes_first {
                    order.sort_by(|&a, &b| raw.key(a as usize).cmp(raw.key(b as usize)));
                }
                let value = |i: u32| merged_sort_value(&spec.value, raw.value(i as usize));
                order.sort_by_key(|&i| value(i));
            }
            SortRule::ByKeyArguments => {
                let layout = spec.key.as_ref();
                for index in (0..key_arity(layout)).rev() {
                    order.sort_by(|&a, &b| {
                        compare_key_argument(
                            layout,
                            index,
                            raw.key(a as usize),
                            raw.key(b as usize),
                        )
                    });
                }
            }
        }
        FlatMap {
            spec,
            raw,
            order,
            zero_when_empty: false,
            resolver,
        }
    }

    /// As `print(@m)` shows a keyless map: when it has no entry (never
    /// assigned, cleared), its value's zero (`@: 0`, `@s: { .count = 0, ...
    /// }`), as bpftrace's `print()` does; histograms and time series still print nothing.
    pub fn zero_when_empty(mut self) -> Self {
        self.zero_when_empty =
            self.spec.key.is_none() && !self.kind().is_hist() && self.kind() != MapKind::Tseries;
        self
    }

    /// What the map holds (its key layout tells a profile's stacks apart).
    pub fn spec(&self) -> &MapSpec {
        self.spec
    }

    /// As written in the script, with `@`.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    pub fn kind(&self) -> MapKind {
        map_kind(&self.spec.value)
    }

    pub fn keyed(&self) -> bool {
        self.spec.key.is_some()
    }

    /// The number of entries printed.
    pub fn len(&self) -> usize {
        if self.zero_when_empty && self.order.is_empty() {
            1
        } else {
            self.order.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `index` in print order, decoded and resolved.
    pub fn entry(&mut self, index: usize) -> MapEntry {
        let Some(&at) = self.order.get(index) else {
            return zero_entry(self.spec);
        };
        let at = at as usize;
        let mut entry = MapEntry {
            key: decode_key(self.spec.key.as_ref(), self.raw.key(at)),
            value: merge_value(&self.spec.value, &[self.raw.value(at)]),
        };
        if let Some(resolver) = self.resolver.as_deref_mut() {
            for key in &mut entry.key {
                resolve_value(key, resolver);
            }
            if let MapEntryValue::Plain(v) = &mut entry.value {
                resolve_value(v, resolver);
            }
        }
        entry
    }

    /// Every entry decoded at once, as [`crate::decode_map_with`] gives them.
    pub fn to_dump(&mut self) -> MapDump {
        MapDump {
            name: self.spec.name.clone(),
            kind: self.kind(),
            keyed: self.keyed(),
            entries: (0..self.len()).map(|i| self.entry(i)).collect(),
        }
    }
}

/// The entry of a keyless map whose value bytes are all zero.
pub fn zero_entry(spec: &MapSpec) -> MapEntry {
    MapEntry {
        key: Vec::new(),
        value: merge_value(&spec.value, &[&[][..]]),
    }
}

/// A map being printed: a [`MapDump`] or a [`FlatMap`].
pub(crate) trait EntrySource {
    fn name(&self) -> &str;
    fn kind(&self) -> MapKind;
    fn keyed(&self) -> bool;
    fn len(&self) -> usize;
    fn entry(&mut self, index: usize) -> Cow<'_, MapEntry>;
}

impl EntrySource for &MapDump {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> MapKind {
        self.kind
    }

    fn keyed(&self) -> bool {
        self.keyed
    }

    fn len(&self) -> usize {
        self.entries.len()
    }

    fn entry(&mut self, index: usize) -> Cow<'_, MapEntry> {
        Cow::Borrowed(&self.entries[index])
    }
}

impl EntrySource for FlatMap<'_> {
    fn name(&self) -> &str {
        FlatMap::name(self)
    }

    fn kind(&self) -> MapKind {
        FlatMap::kind(self)
    }

    fn keyed(&self) -> bool {
        FlatMap::keyed(self)
    }

    fn len(&self) -> usize {
        FlatMap::len(self)
    }

    fn entry(&mut self, index: usize) -> Cow<'_, MapEntry> {
        Cow::Owned(FlatMap::entry(self, index))
    }
}

/// The indices of the entries `print(@m, top)` shows: the last `top` (the
/// largest, as entries are in ascending order).
pub(crate) fn shown_range(len: usize, top: u64) -> std::ops::Range<usize> {
    let top = usize::try_from(top).unwrap_or(usize::MAX);
    if top == 0 || len <= top {
        0..len
    } else {
        len - top..len
    }
}
