//! Maps and streams as metric families, whatever the wire format: the
//! Prometheus exposition (written by the cli with `prometheus-client`) and
//! OTLP metrics both encode what is decided here.
//!
//! - names: `weft_` and the map's name (or the `name=` of its
//!   `// weft:metric` directive), the unit's base name (`_seconds`,
//!   `_bytes`), and `_total` for counters (added by the encoders);
//! - kinds: `count()` and `sum()` are counters; `min()`, `max()`, `avg()`
//!   and integer values are gauges; `hist()` and `lhist()` are histograms;
//!   `stats()` is a histogram with only the `+Inf` bucket (its count and
//!   sum, from which `rate(_sum) / rate(_count)` gives the average);
//! - labels: one per key argument, named after the key expression
//!   (`abi::MapExport::labels`), else `key0`, `key1`, ...;
//! - histogram bounds: `le` is the largest value a bucket holds, so the
//!   buckets are exact for the integers bpftrace counts: `hist()`'s bucket
//!   `[2^k, 2^(k+1))` is `le="2^(k+1)-1"`, zero is `le="0"`, negatives
//!   `le="-1"`; `lhist()`'s step `[a, a+step)` is `le="a+step-1"`, and its
//!   last bucket (at or above max) is `+Inf`. Only the buckets from the
//!   lowest to the highest non-empty one of the whole map are written
//!   (buckets only fill up, so the set only grows between scrapes);
//! - `_sum` of a `hist()`/`lhist()` is not known (bpftrace keeps only the
//!   buckets) and is NaN: use the buckets (`histogram_quantile`).
//!
//! Stream metrics ([`StreamMetrics`]) are counted in user space from the
//! records that reach it, in atomics the event loop updates and a scrape
//! reads from another thread.

use std::sync::atomic::{AtomicU64, Ordering};

use abi::{Aggregation, Layout, MapExport, MapSpec, MapValue, MetricUnit};

use crate::decode::{decode_key, merged_sort_value};
use crate::stack::Stack;
use crate::stream::StreamRecord;
use crate::value::Value;

/// What every metric weft exports starts with.
pub const PREFIX: &str = "weft_";

/// Label names the exporters use themselves: a key argument of that name
/// is called `keyN` instead.
pub const RESERVED_LABELS: &[&str] = &["le", "quantile", "script", "job", "instance"];

/// The metric families weft exports about itself (besides each map's).
pub mod own {
    /// Events dropped because the ring buffer was full (counter).
    pub const EVENTS_LOST: &str = "weft_events_lost";
    /// Map updates that failed because a map was full (counter).
    pub const MAP_UPDATES_LOST: &str = "weft_map_updates_lost";
    /// Keys in each map now (gauge, label `map`).
    pub const MAP_ENTRIES: &str = "weft_map_entries";
    /// Each map's capacity (gauge, label `map`).
    pub const MAP_CAPACITY: &str = "weft_map_capacity";
    /// Series left out of this scrape by `--prometheus-max-series` (gauge, label `map`).
    pub const SERIES_DROPPED: &str = "weft_series_dropped";
    /// Time to read the maps of this scrape (gauge, seconds).
    pub const SCRAPE_SECONDS: &str = "weft_scrape_duration_seconds";
    /// Stream duration, begin to end (histogram, seconds, label `stream`).
    pub const STREAM_DURATION: &str = "weft_stream_duration_seconds";
    /// Time from a stream's previous stage to this one (histogram, seconds, labels `stream`, `stage`).
    pub const STREAM_STAGE_DURATION: &str = "weft_stream_stage_duration_seconds";
    /// Stream instances by how they ended (counter, labels `stream`, `outcome`).
    pub const STREAM_INSTANCES: &str = "weft_stream_instances";
    /// BPF program runs, when run statistics are on (counter, labels `probe`, `program`).
    pub const PROGRAM_RUNS: &str = "weft_program_run_count";
    /// BPF program run time, when run statistics are on (counter, seconds).
    pub const PROGRAM_RUN_TIME: &str = "weft_program_run_time_seconds";
    /// Which weft is running (gauge 1, label `version`).
    pub const BUILD_INFO: &str = "weft_build_info";
    /// Every name above: a map whose metric would take one is not exported.
    pub const ALL: &[&str] = &[
        EVENTS_LOST,
        MAP_UPDATES_LOST,
        MAP_ENTRIES,
        MAP_CAPACITY,
        SERIES_DROPPED,
        SCRAPE_SECONDS,
        STREAM_DURATION,
        STREAM_STAGE_DURATION,
        STREAM_INSTANCES,
        PROGRAM_RUNS,
        PROGRAM_RUN_TIME,
        BUILD_INFO,
    ];
}

/// The three kinds of metric weft exports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// Only goes up (resets when the map is cleared); exported with `_total`.
    Counter,
    Gauge,
    Histogram,
}

/// One sample's value.
#[derive(Clone, Debug, PartialEq)]
pub enum SampleValue {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Histogram(HistogramSample),
}

impl SampleValue {
    /// The value as a float (a histogram's count).
    pub fn as_f64(&self) -> f64 {
        match self {
            SampleValue::Unsigned(v) => *v as f64,
            SampleValue::Signed(v) => *v as f64,
            SampleValue::Float(v) => *v,
            SampleValue::Histogram(h) => h.count as f64,
        }
    }
}

/// A histogram sample: `buckets` are `(le, count)` with counts *not*
/// cumulative (the encoders accumulate), in increasing `le`; a last
/// `+Inf` bucket is implied when missing. `sum` is NaN when unknown.
#[derive(Clone, Debug, PartialEq)]
pub struct HistogramSample {
    pub buckets: Vec<(f64, u64)>,
    pub sum: f64,
    pub count: u64,
}

/// Why a map is not exported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotExported {
    /// `// weft:metric @m skip`.
    Skipped,
    /// Its values are not numbers (strings, tuples, stacks...).
    NotNumeric(String),
}

/// How one map becomes one metric family.
#[derive(Clone, Debug)]
pub struct MapMetric {
    /// Index of the map in the manifest.
    pub map: usize,
    pub spec: MapSpec,
    /// The family's name (without `_total`: encoders add it to counters).
    pub name: String,
    pub help: String,
    pub kind: MetricKind,
    /// One label name per key argument.
    pub labels: Vec<String>,
    /// From the map's unit to the exported base unit (see `MetricUnit::divisor`).
    divisor: f64,
}

/// The part of a map's name that follows `weft_`: its name without `@`,
/// every character outside `[a-zA-Z0-9_]` as `_`, or for `@` alone the
/// aggregation's name (`count`, `hist`) or `value`.
fn base_name(spec: &MapSpec) -> String {
    let name = spec.name.trim_start_matches('@');
    if name.is_empty() {
        return match &spec.value {
            MapValue::Agg(agg) => agg.name().to_string(),
            MapValue::Plain(_) => "value".to_string(),
        };
    }
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The family's full name: prefix, base, unit (unless the base already
/// ends with it), and without a `_total` the encoders add back to counters.
fn family_name(base: &str, unit: MetricUnit, kind: MetricKind) -> String {
    let mut name = format!("{PREFIX}{base}");
    if kind == MetricKind::Counter
        && let Some(stripped) = name.strip_suffix("_total")
    {
        name = stripped.to_string();
    }
    if let Some(unit) = unit.base_name()
        && !name.ends_with(&format!("_{unit}"))
    {
        name.push('_');
        name.push_str(unit);
    }
    name
}

/// The label names of a map's key arguments: the export's names where they
/// are given, unique and not reserved, else `keyN`.
fn label_names(spec: &MapSpec, export: &MapExport) -> Vec<String> {
    let arity = match &spec.key {
        None => 0,
        Some(Layout::Tuple { fields, .. }) => fields.len(),
        Some(_) => 1,
    };
    let mut out: Vec<String> = Vec::with_capacity(arity);
    for index in 0..arity {
        let given = export
            .labels
            .get(index)
            .cloned()
            .flatten()
            .filter(|n| !RESERVED_LABELS.contains(&n.as_str()) && !out.contains(n));
        out.push(given.unwrap_or_else(|| format!("key{index}")));
    }
    out
}

impl MapMetric {
    /// How map `index` of a manifest is exported, or why it is not.
    pub fn new(index: usize, spec: &MapSpec, export: &MapExport) -> Result<MapMetric, NotExported> {
        if export.skip {
            return Err(NotExported::Skipped);
        }
        let kind = match &spec.value {
            MapValue::Agg(Aggregation::Count | Aggregation::Sum { .. }) => MetricKind::Counter,
            MapValue::Agg(
                Aggregation::Min { .. } | Aggregation::Max { .. } | Aggregation::Avg { .. },
            ) => MetricKind::Gauge,
            MapValue::Agg(
                Aggregation::Stats { .. } | Aggregation::Hist { .. } | Aggregation::Lhist { .. },
            ) => MetricKind::Histogram,
            MapValue::Agg(Aggregation::Tseries { .. }) => {
                return Err(NotExported::NotNumeric(format!(
                    "{} is a time series (its own history), not one number per key",
                    spec.name
                )));
            }
            MapValue::Plain(Layout::Int { .. } | Layout::Bool) => MetricKind::Gauge,
            MapValue::Plain(other) => {
                return Err(NotExported::NotNumeric(format!(
                    "{} holds {}, not numbers",
                    spec.name,
                    layout_words(other)
                )));
            }
        };
        // A count is a number of events whatever the unit of what was counted.
        let unit = if spec.value == MapValue::Agg(Aggregation::Count) {
            MetricUnit::None
        } else {
            export.unit
        };
        let base = export.name.clone().unwrap_or_else(|| base_name(spec));
        let name = family_name(&base, unit, kind);
        let help = export.help.clone().unwrap_or_else(|| default_help(spec));
        Ok(MapMetric {
            map: index,
            spec: spec.clone(),
            name,
            help,
            kind,
            labels: label_names(spec, export),
            divisor: unit.divisor(),
        })
    }

    /// The key arguments of one entry (stacks and symbols not resolved).
    pub fn key_values(&self, key: &[u8]) -> Vec<Value> {
        decode_key(self.spec.key.as_ref(), key)
    }

    /// What a series weighs when `--prometheus-max-series` keeps only the
    /// heaviest: its value, or a histogram's count.
    pub fn weight(&self, merged: &[u8]) -> i128 {
        merged_sort_value(&self.spec.value, merged).unwrap_or(0)
    }

    /// The buckets of a histogram map (`None` for other kinds), from a
    /// merged value (see `decode::merged_value_size`).
    fn bucket_counts(&self, merged: &[u8]) -> Option<Vec<u64>> {
        let n = match &self.spec.value {
            MapValue::Agg(Aggregation::Hist { bits }) => abi::hist_buckets(*bits) as usize,
            MapValue::Agg(agg @ Aggregation::Lhist { .. }) => agg.lhist_buckets() as usize,
            _ => return None,
        };
        Some((0..n).map(|i| word(merged, i)).collect())
    }

    /// The indices of the buckets to write for a histogram map: from the
    /// lowest to the highest bucket any of `values` (merged) has counted in.
    pub fn bucket_range<'a>(
        &self,
        values: impl Iterator<Item = &'a [u8]>,
    ) -> std::ops::Range<usize> {
        let mut range: Option<(usize, usize)> = None;
        for value in values {
            let Some(counts) = self.bucket_counts(value) else {
                return 0..0;
            };
            let first = counts.iter().position(|&c| c != 0);
            let last = counts.iter().rposition(|&c| c != 0);
            if let (Some(first), Some(last)) = (first, last) {
                range = Some(match range {
                    None => (first, last),
                    Some((a, b)) => (a.min(first), b.max(last)),
                });
            }
        }
        range.map_or(0..0, |(a, b)| a..b + 1)
    }

    /// The `le` of bucket `index` in the map's own unit (`f64::INFINITY`
    /// for an lhist's last bucket).
    fn bucket_bound(&self, index: usize) -> f64 {
        match self.spec.value {
            MapValue::Agg(Aggregation::Lhist { min, max, step }) => {
                let n = ((max - min) / step.max(1)) as usize;
                if index == 0 {
                    (min - 1) as f64
                } else if index > n {
                    f64::INFINITY
                } else {
                    (min + index as i64 * step - 1) as f64
                }
            }
            MapValue::Agg(Aggregation::Hist { bits }) if bits > 0 => match index {
                0 => -1.0,
                _ => crate::hist::hist_upper(index, u32::from(bits)) as f64 - 1.0,
            },
            _ => match index {
                0 => -1.0,
                1 => 0.0,
                // [2^k, 2^(k+1)) holds integers up to 2^(k+1) - 1.
                k => ((1u128 << (k - 1)) - 1) as f64,
            },
        }
    }

    /// The value of one entry (merged over CPUs); `buckets` is the
    /// [`MapMetric::bucket_range`] of the map, for histograms.
    pub fn sample(&self, merged: &[u8], buckets: &std::ops::Range<usize>) -> SampleValue {
        let scaled = |v: f64| v / self.divisor;
        let unscaled = self.divisor == 1.0;
        match &self.spec.value {
            MapValue::Agg(Aggregation::Count) => SampleValue::Unsigned(word(merged, 0)),
            MapValue::Agg(Aggregation::Sum { signed }) => {
                integer(word(merged, 0), *signed, unscaled, scaled)
            }
            MapValue::Agg(Aggregation::Min { signed } | Aggregation::Max { signed }) => {
                integer(word(merged, 0), *signed, unscaled, scaled)
            }
            MapValue::Agg(Aggregation::Avg { signed }) => {
                let count = word(merged, 0);
                let total = if *signed {
                    word(merged, 1) as i64 as f64
                } else {
                    word(merged, 1) as f64
                };
                SampleValue::Float(if count == 0 {
                    0.0
                } else {
                    scaled(total / count as f64)
                })
            }
            MapValue::Agg(Aggregation::Stats { signed }) => {
                let count = word(merged, 0);
                let total = if *signed {
                    word(merged, 1) as i64 as f64
                } else {
                    word(merged, 1) as f64
                };
                SampleValue::Histogram(HistogramSample {
                    buckets: Vec::new(),
                    sum: scaled(total),
                    count,
                })
            }
            MapValue::Agg(Aggregation::Hist { .. } | Aggregation::Lhist { .. }) => {
                let counts = self.bucket_counts(merged).unwrap_or_default();
                let count = counts.iter().fold(0u64, |a, &c| a.wrapping_add(c));
                let buckets = buckets
                    .clone()
                    .filter(|&i| i < counts.len())
                    .map(|i| (scaled(self.bucket_bound(i)), counts[i]))
                    .collect();
                SampleValue::Histogram(HistogramSample {
                    buckets,
                    sum: f64::NAN,
                    count,
                })
            }
            // Never exported (see `MapMetric::new`).
            MapValue::Agg(Aggregation::Tseries { .. }) => SampleValue::Unsigned(0),
            MapValue::Plain(Layout::Int { size, signed }) => {
                let raw = read_int(merged, *size as usize, *signed);
                integer(raw, *signed, unscaled, scaled)
            }
            MapValue::Plain(_) => {
                SampleValue::Unsigned(u64::from(merged.first().is_some_and(|&b| b != 0)))
            }
        }
    }
}

/// An integer value: exact when no unit scales it, else a float.
fn integer(bits: u64, signed: bool, unscaled: bool, scaled: impl Fn(f64) -> f64) -> SampleValue {
    match (signed, unscaled) {
        (true, true) => SampleValue::Signed(bits as i64),
        (false, true) => SampleValue::Unsigned(bits),
        (true, false) => SampleValue::Float(scaled(bits as i64 as f64)),
        (false, false) => SampleValue::Float(scaled(bits as f64)),
    }
}

fn read_int(bytes: &[u8], size: usize, signed: bool) -> u64 {
    let size = size.clamp(1, 8);
    let mut buf = [0u8; 8];
    let n = bytes.len().min(size);
    buf[..n].copy_from_slice(&bytes[..n]);
    let raw = u64::from_le_bytes(buf);
    if signed && size < 8 {
        let shift = 64 - 8 * size as u32;
        (((raw << shift) as i64) >> shift) as u64
    } else {
        raw
    }
}

fn word(bytes: &[u8], index: usize) -> u64 {
    let start = (index * 8).min(bytes.len());
    let end = (start + 8).min(bytes.len());
    let mut buf = [0u8; 8];
    buf[..end - start].copy_from_slice(&bytes[start..end]);
    u64::from_le_bytes(buf)
}

fn layout_words(layout: &Layout) -> &'static str {
    match layout {
        Layout::Str { .. } => "strings",
        Layout::Tuple { .. } => "tuples",
        Layout::KStack { .. } | Layout::UStack { .. } => "stacks",
        Layout::KSym | Layout::USym => "symbols",
        Layout::Inet => "addresses",
        Layout::Pointer => "pointers",
        _ => "bytes",
    }
}

fn default_help(spec: &MapSpec) -> String {
    match &spec.value {
        MapValue::Agg(agg) => format!("{}() of bpftrace map {}", agg.name(), spec.name),
        MapValue::Plain(_) => format!("Value of bpftrace map {}", spec.name),
    }
}

/// A key argument as a label value: numbers in decimal, strings as they
/// are (invalid UTF-8 replaced), pointers in hex, stacks folded
/// (outermost frame first, `;` between frames, as flame graphs read them),
/// symbols by name, tuples as `print()` shows them.
pub fn label_value(value: &Value) -> String {
    match value {
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Pointer(v) => format!("0x{v:x}"),
        Value::Str(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Value::Stack(stack) => folded(stack),
        other => String::from_utf8_lossy(&crate::text::value_text(other)).into_owned(),
    }
}

fn folded(stack: &Stack) -> String {
    let frames: Vec<String> = stack
        .frames
        .iter()
        .rev()
        .take_while(|f| f.addr != 0)
        .map(|f| match &f.symbol {
            Some(s) => s.name.clone(),
            None => format!("0x{:x}", f.addr),
        })
        .collect();
    frames.join(";")
}

/// The indices of the entries to export when at most `limit` may be: all
/// of them when they fit, else the `limit` heaviest (ties by key bytes, so
/// the same series stay from one scrape to the next).
pub fn select_heaviest<'a>(
    count: usize,
    limit: usize,
    weight: impl Fn(usize) -> i128,
    key: impl Fn(usize) -> &'a [u8],
) -> Vec<usize> {
    let mut all: Vec<usize> = (0..count).collect();
    if count <= limit {
        return all;
    }
    let order = |a: &usize, b: &usize| {
        weight(*b)
            .cmp(&weight(*a))
            .then_with(|| key(*a).cmp(key(*b)))
    };
    if limit > 0 {
        all.select_nth_unstable_by(limit - 1, order);
    }
    all.truncate(limit);
    all
}

/// Upper bounds (ns) of the duration buckets of stream metrics: powers of
/// two from 128 ns to 2^35 ns (34 s); a last bucket is `+Inf`.
const DURATION_MIN_SHIFT: u32 = 7;
const DURATION_MAX_SHIFT: u32 = 35;
/// Buckets of a [`DurationHistogram`], the `+Inf` one included.
const DURATION_BUCKETS: usize = (DURATION_MAX_SHIFT - DURATION_MIN_SHIFT + 2) as usize;

/// A duration histogram filled by one thread and read by another.
#[derive(Debug)]
pub struct DurationHistogram {
    /// Bucket `i` counts durations in `(2^(i+6), 2^(i+7)]` ns (the first
    /// from 0, the last to infinity).
    buckets: [AtomicU64; DURATION_BUCKETS],
    sum_ns: AtomicU64,
    count: AtomicU64,
}

impl Default for DurationHistogram {
    fn default() -> DurationHistogram {
        DurationHistogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_ns: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }
}

impl DurationHistogram {
    /// Counts one duration.
    pub fn observe(&self, ns: u64) {
        // The smallest k with ns <= 2^k.
        let k = 64 - ns.saturating_sub(1).leading_zeros();
        let index = (k.saturating_sub(DURATION_MIN_SHIFT) as usize).min(DURATION_BUCKETS - 1);
        self.buckets[index].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// The histogram now, in seconds. Read while it is being filled, the
    /// count may differ from the buckets' sum by the observations in flight.
    pub fn sample(&self) -> HistogramSample {
        let buckets = self
            .buckets
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let le = if i == DURATION_BUCKETS - 1 {
                    f64::INFINITY
                } else {
                    (1u64 << (i as u32 + DURATION_MIN_SHIFT)) as f64 / 1e9
                };
                (le, b.load(Ordering::Relaxed))
            })
            .collect::<Vec<_>>();
        let count = buckets.iter().map(|(_, c)| c).sum();
        HistogramSample {
            buckets,
            sum: self.sum_ns.load(Ordering::Relaxed) as f64 / 1e9,
            count,
        }
    }
}

/// The duration histograms of one stream: begin to end, and each stage
/// after the first from the stage reached before it.
#[derive(Debug)]
pub struct StreamHistograms {
    pub stream: String,
    pub total: DurationHistogram,
    /// `(stage name, histogram)` for every stage after the first.
    pub stages: Vec<(String, DurationHistogram)>,
}

/// The duration histograms of every stream of a script, filled from the
/// records that reach user space.
#[derive(Debug, Default)]
pub struct StreamMetrics {
    pub streams: Vec<StreamHistograms>,
}

impl StreamMetrics {
    pub fn new(specs: &[abi::StreamSpec]) -> StreamMetrics {
        StreamMetrics {
            streams: specs
                .iter()
                .map(|s| StreamHistograms {
                    stream: s.name.clone(),
                    total: DurationHistogram::default(),
                    stages: s
                        .stages
                        .iter()
                        .skip(1)
                        .map(|st| (st.name.clone(), DurationHistogram::default()))
                        .collect(),
                })
                .collect(),
        }
    }

    /// Counts one record of stream `id`: its duration when complete, and
    /// the time to each stage it reached after the first.
    pub fn observe(&self, id: usize, record: &StreamRecord<'_>) {
        let Some(h) = self.streams.get(id) else {
            return;
        };
        if record.complete {
            h.total.observe(record.duration_ns);
        }
        for (stage, (_, hist)) in record.stages.iter().skip(1).zip(&h.stages) {
            if stage.ts_ns != 0 {
                // A stage that fired before its predecessor took no time after it.
                hist.observe(stage.delta_ns.max(0) as u64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, key: Option<Layout>, value: MapValue) -> MapSpec {
        MapSpec {
            name: name.into(),
            bpf_name: "m0".into(),
            key,
            value,
            max_entries: 10,
        }
    }

    fn labels(names: &[&str]) -> MapExport {
        MapExport {
            labels: names.iter().map(|n| Some(n.to_string())).collect(),
            ..MapExport::default()
        }
    }

    #[test]
    fn names_follow_the_conventions() {
        let count = spec(
            "@reads",
            Some(Layout::u64()),
            MapValue::Agg(Aggregation::Count),
        );
        let m = MapMetric::new(0, &count, &labels(&["pid"])).unwrap();
        assert_eq!(
            (m.name.as_str(), m.kind),
            ("weft_reads", MetricKind::Counter)
        );
        assert_eq!(m.labels, ["pid"]);
        assert_eq!(m.help, "count() of bpftrace map @reads");
        // `@` alone takes its aggregation's name; `_total` is the encoder's.
        let at = spec("@", None, MapValue::Agg(Aggregation::Hist { bits: 0 }));
        assert_eq!(
            MapMetric::new(0, &at, &MapExport::default()).unwrap().name,
            "weft_hist"
        );
        let total = spec("@calls_total", None, MapValue::Agg(Aggregation::Count));
        assert_eq!(
            MapMetric::new(0, &total, &MapExport::default())
                .unwrap()
                .name,
            "weft_calls"
        );
        // A unit ends the name, once; a directive's name replaces the map's.
        let lat = spec("@lat", None, MapValue::Agg(Aggregation::Hist { bits: 0 }));
        let export = MapExport {
            unit: MetricUnit::Nanoseconds,
            name: Some("read_latency".into()),
            help: Some("Read latency".into()),
            ..MapExport::default()
        };
        let m = MapMetric::new(0, &lat, &export).unwrap();
        assert_eq!(m.name, "weft_read_latency_seconds");
        assert_eq!(m.help, "Read latency");
        let export = MapExport {
            unit: MetricUnit::Bytes,
            name: Some("read_bytes".into()),
            ..MapExport::default()
        };
        let sum = spec(
            "@b",
            None,
            MapValue::Agg(Aggregation::Sum { signed: false }),
        );
        assert_eq!(
            MapMetric::new(0, &sum, &export).unwrap().name,
            "weft_read_bytes"
        );
        // Characters a metric name cannot hold.
        let odd = spec("@a.b", None, MapValue::Plain(Layout::u64()));
        let m = MapMetric::new(0, &odd, &MapExport::default()).unwrap();
        assert_eq!((m.name.as_str(), m.kind), ("weft_a_b", MetricKind::Gauge));
    }

    #[test]
    fn labels_are_unique_and_never_reserved() {
        let key = Layout::tuple([Layout::u64(), Layout::u64(), Layout::u64(), Layout::u64()]);
        let m = spec("@x", Some(key), MapValue::Agg(Aggregation::Count));
        let export = MapExport {
            labels: vec![
                Some("fd".into()),
                Some("fd".into()),
                None,
                Some("le".into()),
            ],
            ..MapExport::default()
        };
        assert_eq!(
            MapMetric::new(0, &m, &export).unwrap().labels,
            ["fd", "key1", "key2", "key3"]
        );
        // No names known at all.
        assert_eq!(
            MapMetric::new(0, &m, &MapExport::default()).unwrap().labels,
            ["key0", "key1", "key2", "key3"]
        );
    }

    #[test]
    fn strings_and_skipped_maps_are_not_exported() {
        let s = spec(
            "@name",
            Some(Layout::u64()),
            MapValue::Plain(Layout::Str { size: 16 }),
        );
        assert_eq!(
            MapMetric::new(0, &s, &MapExport::default()).unwrap_err(),
            NotExported::NotNumeric("@name holds strings, not numbers".into())
        );
        let c = spec(
            "@start",
            Some(Layout::u64()),
            MapValue::Plain(Layout::u64()),
        );
        let skip = MapExport {
            skip: true,
            ..MapExport::default()
        };
        assert_eq!(
            MapMetric::new(0, &c, &skip).unwrap_err(),
            NotExported::Skipped
        );
    }

    fn le(words: &[u64]) -> Vec<u8> {
        crate::decode::le_bytes(words)
    }

    #[test]
    fn hist_buckets_are_exact_for_integers() {
        let m = MapMetric::new(
            0,
            &spec("@h", None, MapValue::Agg(Aggregation::Hist { bits: 0 })),
            &MapExport::default(),
        )
        .unwrap();
        let mut a = vec![0u64; abi::HIST_BUCKETS as usize];
        // 3 zeros, 5 values in [1, 2), 2 in [4, 8).
        a[1] = 3;
        a[2] = 5;
        a[4] = 2;
        let mut b = vec![0u64; abi::HIST_BUCKETS as usize];
        b[5] = 1; // one value in [8, 16)
        let (a, b) = (le(&a), le(&b));
        let range = m.bucket_range([a.as_slice(), b.as_slice()].into_iter());
        assert_eq!(range, 1..6);
        let SampleValue::Histogram(h) = m.sample(&a, &range) else {
            panic!()
        };
        assert_eq!(
            h.buckets,
            [(0.0, 3), (1.0, 5), (3.0, 0), (7.0, 2), (15.0, 0)]
        );
        assert_eq!(h.count, 10);
        assert!(h.sum.is_nan());
        // Negative values: le="-1".
        let mut n = vec![0u64; abi::HIST_BUCKETS as usize];
        n[0] = 4;
        let n = le(&n);
        let range = m.bucket_range([n.as_slice()].into_iter());
        let SampleValue::Histogram(h) = m.sample(&n, &range) else {
            panic!()
        };
        assert_eq!(h.buckets, [(-1.0, 4)]);
        // The largest bucket, [2^63, 2^64).
        assert_eq!(m.bucket_bound(65), (u64::MAX) as f64);
    }

    #[test]
    fn lhist_buckets_are_steps_and_the_last_is_infinite() {
        let lhist = Aggregation::Lhist {
            min: 0,
            max: 100,
            step: 10,
        };
        let n = lhist.lhist_buckets() as usize;
        let export = MapExport {
            unit: MetricUnit::Milliseconds,
            ..MapExport::default()
        };
        let m = MapMetric::new(0, &spec("@l", None, MapValue::Agg(lhist)), &export).unwrap();
        assert_eq!(m.name, "weft_l_seconds");
        let mut c = vec![0u64; n];
        c[0] = 1; // below 0
        c[1] = 2; // [0, 10)
        c[n - 1] = 3; // at or above 100
        let c = le(&c);
        let range = m.bucket_range([c.as_slice()].into_iter());
        assert_eq!(range, 0..n);
        let SampleValue::Histogram(h) = m.sample(&c, &range) else {
            panic!()
        };
        assert_eq!(h.buckets.first(), Some(&(-0.001, 1)));
        assert_eq!(h.buckets[1], (0.009, 2));
        assert_eq!(h.buckets[10], (0.099, 0));
        assert_eq!(h.buckets.last(), Some(&(f64::INFINITY, 3)));
        assert_eq!(h.count, 6);
    }

    #[test]
    fn gauges_counters_and_stats_take_their_values() {
        let none = 0..0;
        let sum = spec("@s", None, MapValue::Agg(Aggregation::Sum { signed: true }));
        let m = MapMetric::new(0, &sum, &MapExport::default()).unwrap();
        assert_eq!(
            m.sample(&le(&[(-5i64) as u64]), &none),
            SampleValue::Signed(-5)
        );
        let avg = spec(
            "@a",
            None,
            MapValue::Agg(Aggregation::Avg { signed: false }),
        );
        let export = MapExport {
            unit: MetricUnit::Microseconds,
            ..MapExport::default()
        };
        let m = MapMetric::new(0, &avg, &export).unwrap();
        assert_eq!(m.sample(&le(&[4, 10]), &none), SampleValue::Float(2.5e-6));
        assert_eq!(m.sample(&le(&[0, 0]), &none), SampleValue::Float(0.0));
        let stats = spec(
            "@st",
            None,
            MapValue::Agg(Aggregation::Stats { signed: false }),
        );
        let m = MapMetric::new(0, &stats, &MapExport::default()).unwrap();
        assert_eq!(
            m.sample(&le(&[4, 10]), &none),
            SampleValue::Histogram(HistogramSample {
                buckets: vec![],
                sum: 10.0,
                count: 4
            })
        );
        let plain = spec(
            "@p",
            None,
            MapValue::Plain(Layout::Int {
                size: 4,
                signed: true,
            }),
        );
        let m = MapMetric::new(0, &plain, &MapExport::default()).unwrap();
        assert_eq!(
            m.sample(&(-7i32).to_le_bytes(), &none),
            SampleValue::Signed(-7)
        );
        // A count stays a count of events, whatever unit the directive says.
        let count = spec("@c", None, MapValue::Agg(Aggregation::Count));
        let m = MapMetric::new(0, &count, &export).unwrap();
        assert_eq!(
            (m.name.as_str(), m.sample(&le(&[9]), &none)),
            ("weft_c", SampleValue::Unsigned(9))
        );
    }

    #[test]
    fn label_values_print_like_keys() {
        assert_eq!(label_value(&Value::Int(-3)), "-3");
        assert_eq!(label_value(&Value::str("weftwl")), "weftwl");
        assert_eq!(label_value(&Value::Pointer(255)), "0xff");
        assert_eq!(label_value(&Value::Str(vec![b'a', 0xff])), "a\u{fffd}");
        let stack = Stack {
            user: false,
            mode: abi::StackMode::Bpftrace,
            limit: 127,
            id: 1,
            pid: 0,
            frames: vec![
                crate::stack::Frame {
                    addr: 1,
                    symbol: Some(crate::stack::Symbol {
                        name: "inner".into(),
                        offset: 4,
                        module: None,
                    }),
                    file: None,
                },
                crate::stack::Frame {
                    addr: 2,
                    symbol: None,
                    file: None,
                },
            ],
        };
        assert_eq!(label_value(&Value::Stack(Box::new(stack))), "0x2;inner");
    }

    #[test]
    fn the_heaviest_series_are_kept() {
        static KEYS: [[u8; 1]; 5] = [[0], [1], [2], [3], [4]];
        let weights = [5i128, 1, 9, 5, 3];
        let mut kept = select_heaviest(5, 3, |i| weights[i], |i| &KEYS[i]);
        kept.sort();
        assert_eq!(kept, [0, 2, 3]);
        assert_eq!(
            select_heaviest(5, 9, |i| weights[i], |i| &KEYS[i]),
            [0, 1, 2, 3, 4]
        );
        assert!(select_heaviest(5, 0, |i| weights[i], |i| &KEYS[i]).is_empty());
    }

    #[test]
    fn durations_fall_in_power_of_two_buckets() {
        let h = DurationHistogram::default();
        for ns in [1, 128, 129, 1000, 1 << 40] {
            h.observe(ns);
        }
        let s = h.sample();
        assert_eq!(s.count, 5);
        assert_eq!(s.buckets.len(), DURATION_BUCKETS);
        assert_eq!(s.buckets[0], (128e-9, 2));
        assert_eq!(s.buckets[1], (256e-9, 1));
        assert_eq!(s.buckets[3], (1024e-9, 1));
        assert_eq!(s.buckets.last(), Some(&(f64::INFINITY, 1)));
        assert_eq!(s.sum, (1 + 128 + 129 + 1000 + (1u64 << 40)) as f64 / 1e9);
    }
}
