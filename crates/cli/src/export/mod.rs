//! Fleet export: what a run (or an agent running several scripts) sends
//! past the machine.
//!
//! - [`prometheus`]: `--prometheus ADDR` serves `/metrics`, reading the
//!   maps from the kernel at scrape time on the server's thread;
//! - [`http`]: the small std HTTP server and client both use.
//!
//! The event loop only feeds a [`StreamTap`] per script (duration
//! histograms, records for spans); everything else happens on the
//! exporters' own threads through a [`runtime::SessionReader`].

pub mod http;
pub mod prometheus;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use abi::Manifest;
use output::StreamRecord;
use output::metrics::{MapMetric, NotExported, StreamMetrics};
use runtime::SessionReader;

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
}

impl StreamTap {
    pub fn new(manifest: &Manifest) -> StreamTap {
        let n = manifest.streams.len();
        StreamTap {
            metrics: StreamMetrics::new(&manifest.streams),
            expired_user: (0..n).map(|_| AtomicU64::new(0)).collect(),
            evicted_seen: (0..n).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// One record of stream `id` reached user space.
    pub fn record(&self, id: usize, record: &StreamRecord<'_>) {
        self.metrics.observe(id, record);
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
                manifest: manifest.clone(),
                reader,
                maps,
                streams,
            },
            warnings,
        )
    }
}

/// BPF run statistics: exported when the `--stats` option turns them on
/// (it sets [`program_stats_wanted`]'s flag), or when the kernel already
/// counts for everyone (`kernel.bpf_stats_enabled = 1`).
static PROGRAM_STATS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks the exporters to export each program's run count and run time
/// (the hook for `--stats`, which enables the kernel's counting).
#[allow(dead_code)]
pub fn want_program_stats() {
    PROGRAM_STATS.store(true, Ordering::Relaxed);
}

/// Whether run count and run time are exported.
pub fn program_stats_wanted() -> bool {
    PROGRAM_STATS.load(Ordering::Relaxed)
        || std::fs::read_to_string("/proc/sys/kernel/bpf_stats_enabled")
            .is_ok_and(|s| s.trim() == "1")
}
