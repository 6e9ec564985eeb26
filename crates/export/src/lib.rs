//! Fleet export: what a run (or an agent running several scripts) sends
//! past the machine.
//!
//! - [`prometheus`]: `--prometheus ADDR` serves `/metrics`, reading the
//!   maps from the kernel at scrape time on the server's thread;
//! - [`otlp`]: `--otlp URL` posts stream records as spans (and map
//!   snapshots as metrics) from its own thread;
//! - [`http`]: the small std HTTP server and client both use.
//!
//! The event loop only feeds a [`StreamTap`] per script (duration
//! histograms, a copy of each record for spans); everything else happens on
//! the exporters' own threads through a [`runtime::SessionReader`].

#![forbid(unsafe_code)]

pub mod http;
pub mod otlp;
pub mod prometheus;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use abi::Manifest;
use output::StreamRecord;
use output::metrics::{MapMetric, MetricKind, NotExported, SampleValue, StreamMetrics};
use runtime::{FlatEntries, SessionReader};

impl tracer::streams::StreamObserver for StreamTap {
    fn record(&self, id: usize, bytes: &[u8], record: &StreamRecord<'_>) {
        StreamTap::record(self, id, bytes, record);
    }

    fn expired(&self, id: usize) {
        StreamTap::expired(self, id);
    }
}

/// What the event loop hands the exporters about one script's streams:
/// each record that reaches user space, and each instance the user-space
/// sweep expired.
#[derive(Debug)]
pub struct StreamTap {
    pub metrics: StreamMetrics,
    /// Per stream: instances the user-space sweep expired.
    expired_user: Vec<AtomicU64>,
    /// Per stream: the largest eviction count exported so far (evictions are
    /// derived from counters read at different instants, so a later read
    /// can come out lower; a counter must not go down).
    evicted_seen: Vec<AtomicU64>,
    /// The records waiting to be sent as spans (`--otlp`).
    pub spans: Option<otlp::SpanQueue>,
}

impl StreamTap {
    /// `span_queue`: how many records may wait to be sent as spans, when
    /// they are (`--otlp`).
    pub fn new(manifest: &Manifest, span_queue: Option<usize>) -> StreamTap {
        let n = manifest.streams.len();
        StreamTap {
            metrics: StreamMetrics::new(&manifest.streams),
            expired_user: (0..n).map(|_| AtomicU64::new(0)).collect(),
            evicted_seen: (0..n).map(|_| AtomicU64::new(0)).collect(),
            spans: span_queue.map(otlp::SpanQueue::new),
        }
    }

    /// One record of stream `id` reached user space: `bytes` as received,
    /// `record` decoded.
    pub fn record(&self, id: usize, bytes: &[u8], record: &StreamRecord<'_>) {
        self.metrics.observe(id, record);
        if let Some(queue) = &self.spans {
            queue.push(id, bytes);
        }
    }

    /// The sweep expired one instance of stream `id`.
    pub fn expired(&self, id: usize) {
        if let Some(n) = self.expired_user.get(id) {
            n.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn expired_user(&self, id: usize) -> u64 {
        self.expired_user
            .get(id)
            .map_or(0, |n| n.load(Ordering::Relaxed))
    }

    /// `evicted` as a counter: never below what was exported before.
    pub fn monotonic_evicted(&self, id: usize, evicted: u64) -> u64 {
        self.evicted_seen.get(id).map_or(evicted, |seen| {
            seen.fetch_max(evicted, Ordering::Relaxed).max(evicted)
        })
    }
}

/// One script as the exporters see it.
pub struct Target {
    /// The `script` label of its metrics (agent mode); `None` for a plain run.
    pub script: Option<String>,
    /// The script's name (its file's, or `-e`), the `weft.script` resource
    /// attribute of what goes over OTLP.
    pub name: String,
    pub manifest: Manifest,
    pub reader: SessionReader,
    /// Its maps that are exported.
    pub maps: Vec<Arc<MapMetric>>,
    pub streams: Arc<StreamTap>,
}

impl Target {
    /// The exported maps of a loaded script, and a sentence for each map
    /// that cannot be exported (skipped maps say nothing).
    pub fn new(
        script: Option<String>,
        name: String,
        manifest: &Manifest,
        reader: SessionReader,
        streams: Arc<StreamTap>,
    ) -> (Target, Vec<String>) {
        let mut maps: Vec<Arc<MapMetric>> = Vec::new();
        let mut warnings = Vec::new();
        for (index, spec) in manifest.maps.iter().enumerate() {
            match MapMetric::new(index, spec, &manifest.export(index)) {
                Ok(m) if output::metrics::own::ALL.contains(&m.name.as_str()) => {
                    warnings.push(format!(
                        "{} is not exported: its metric would be {}, which weft uses for its own; rename it with `// weft:metric {} name=...`",
                        spec.name, m.name, spec.name
                    ))
                }
                Ok(m) => match maps.iter().find(|other| other.name == m.name) {
                    Some(other) => warnings.push(format!(
                        "{} is not exported: its metric would be {}, as {}'s is; rename one with `// weft:metric {} name=...`",
                        spec.name, m.name, other.spec.name, spec.name
                    )),
                    None => maps.push(Arc::new(m)),
                },
                Err(NotExported::Skipped) => {}
                Err(NotExported::NotNumeric(why)) => {
                    warnings.push(format!("{why}: not exported as a metric"))
                }
            }
        }
        (
            Target {
                script,
                name,
                manifest: manifest.clone(),
                reader,
                maps,
                streams,
            },
            warnings,
        )
    }
}

/// The scripts being exported, which the agent swaps on reload.
#[derive(Default)]
pub struct Targets {
    targets: RwLock<Vec<Arc<Target>>>,
}

impl Targets {
    /// The scripts now.
    pub fn current(&self) -> Vec<Arc<Target>> {
        self.targets.read().map(|t| t.clone()).unwrap_or_default()
    }

    /// Puts `target` in place of the one with the same script name (or adds it).
    pub fn replace(&self, target: Arc<Target>) {
        if let Ok(mut all) = self.targets.write() {
            match all.iter_mut().find(|t| t.script == target.script) {
                Some(slot) => *slot = target,
                None => all.push(target),
            }
        }
    }

    /// Drops the script of that name.
    #[allow(dead_code)]
    pub fn remove(&self, script: &str) {
        if let Ok(mut all) = self.targets.write() {
            all.retain(|t| t.script.as_deref() != Some(script));
        }
    }
}

/// Value `index` of `size` bytes in a flat buffer.
pub fn slot(buf: &[u8], size: usize, index: usize) -> &[u8] {
    let start = (index * size).min(buf.len());
    &buf[start..(start + size).min(buf.len())]
}

/// One map as read for a scrape or a snapshot.
pub struct MapRead {
    pub metric: Arc<MapMetric>,
    pub entries: FlatEntries,
    /// The entries exported, by index.
    pub selected: Vec<usize>,
    /// Entries left out by the series limit.
    pub dropped: usize,
    /// The histogram buckets written (see `MapMetric::bucket_range`).
    pub buckets: Range<usize>,
    /// A keyless map that never fired, exported as zero.
    pub unfired: bool,
    /// The label values of the selected entries, when their keys needed
    /// symbols (else decoded while written).
    pub labels: Option<Vec<Vec<String>>>,
}

impl MapRead {
    /// Every exported series: its key's `(label, value)` pairs and its value.
    pub fn samples(&self) -> impl Iterator<Item = (Vec<(String, String)>, SampleValue)> + '_ {
        let key_size = self.entries.key_size();
        let value_size = self.entries.value_size();
        let unfired = self.unfired.then(|| {
            let zero = vec![0u8; output::merged_value_size(&self.metric.spec.value, 16)];
            (Vec::new(), self.metric.sample(&zero, &self.buckets))
        });
        let entries = self.selected.iter().enumerate().map(move |(n, &i)| {
            let values: Vec<String> = match &self.labels {
                Some(all) => all[n].clone(),
                None => self
                    .metric
                    .key_values(slot(self.entries.keys(), key_size, i))
                    .iter()
                    .map(output::metrics::label_value)
                    .collect(),
            };
            let labels = self.metric.labels.iter().cloned().zip(values).collect();
            let value = self
                .metric
                .sample(slot(self.entries.values(), value_size, i), &self.buckets);
            (labels, value)
        });
        unfired.into_iter().chain(entries)
    }
}

/// Reads one exported map of a script now (batch lookups, merged over CPUs).
pub fn read_map(target: &Target, metric: &Arc<MapMetric>) -> Result<MapRead, runtime::MapError> {
    let spec = &metric.spec;
    let entries = target.reader.map_entries_merged(
        &spec.bpf_name,
        |size| output::merged_value_size(&spec.value, size),
        |per_cpu, out| output::merge_entry(spec, false, per_cpu.iter(), out),
    )?;
    let value_size = entries.value_size();
    let buckets =
        metric.bucket_range((0..entries.len()).map(|i| slot(entries.values(), value_size, i)));
    let unfired = entries.is_empty()
        && spec.key.is_none()
        && matches!(metric.kind, MetricKind::Counter | MetricKind::Gauge);
    Ok(MapRead {
        selected: (0..entries.len()).collect(),
        metric: Arc::clone(metric),
        entries,
        dropped: 0,
        buckets,
        unfired,
        labels: None,
    })
}

/// BPF run statistics: exported when the `--stats` option turns them on
/// (it sets [`program_stats_wanted`]'s flag), or when the kernel already
/// counts for everyone (`kernel.bpf_stats_enabled = 1`).
static PROGRAM_STATS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks the exporters to export each program's run count and run time
/// (the hook for `--stats`, which enables the kernel's counting).
pub fn want_program_stats() {
    PROGRAM_STATS.store(true, Ordering::Relaxed);
}

/// Whether run count and run time are exported.
pub fn program_stats_wanted() -> bool {
    PROGRAM_STATS.load(Ordering::Relaxed)
        || std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled")
            .is_ok_and(|s| s.trim() == "1")
}
