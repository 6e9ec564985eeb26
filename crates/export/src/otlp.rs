//! `--otlp URL`: stream records as OpenTelemetry spans, and (with
//! `--otlp-metrics-interval`) map snapshots as OTLP metrics, over OTLP/HTTP
//! with protobuf bodies (`POST /v1/traces`, `POST /v1/metrics`).
//!
//! The event loop only copies each record's bytes into its script's
//! bounded [`SpanQueue`] (a full queue drops the record and counts it); an
//! exporter thread decodes, batches (by size and by interval), encodes and
//! posts, retrying with backoff when the collector is away or busy. What
//! could not be sent is counted and reported at exit.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use output::decode_stream_record;
use output::metrics::MetricKind;
use output::otlp::{self, Clock, Point, SpanIds, proto};

use super::http::{Client, Url};
use super::{Target, Targets};
use runtime::cgroups::CgroupPaths;

/// What `--otlp` and its options ask for.
#[derive(Clone, Debug)]
pub struct OtlpOptions {
    /// The collector's base URL (`http://host:4318`), or its traces URL.
    pub url: Url,
    /// Spans are sent when this many records wait...
    pub batch: usize,
    /// ...or when the oldest has waited this long.
    pub interval: Duration,
    /// Records a script's queue holds at most; past it they are dropped (and counted).
    pub queue: usize,
    /// Map snapshots as OTLP metrics this often (none when `None`).
    pub metrics_interval: Option<Duration>,
    /// Resource attributes every request carries (`service.name`, `host.name`).
    pub resource: Vec<(String, String)>,
}

impl OtlpOptions {
    /// The defaults for a collector at `url`, with this host's resource attributes.
    pub fn new(url: Url) -> OtlpOptions {
        OtlpOptions {
            url,
            batch: OtlpOptions::DEFAULT_BATCH,
            interval: OtlpOptions::DEFAULT_INTERVAL,
            queue: OtlpOptions::DEFAULT_QUEUE,
            metrics_interval: None,
            resource: vec![
                ("service.name".into(), "weft".into()),
                ("host.name".into(), host_name()),
            ],
        }
    }

    pub const DEFAULT_BATCH: usize = 1024;
    pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(2);
    pub const DEFAULT_QUEUE: usize = 16 * 1024;

    /// Where spans go: the URL as given when it ends in `/v1/traces`, else
    /// `/v1/traces` under it (as `OTEL_EXPORTER_OTLP_ENDPOINT` is read).
    pub fn traces_path(&self) -> String {
        signal_path(&self.url.path, "traces")
    }

    pub fn metrics_path(&self) -> String {
        signal_path(&self.url.path, "metrics")
    }
}

fn signal_path(base: &str, signal: &str) -> String {
    let base = base
        .strip_suffix("/v1/traces")
        .or_else(|| base.strip_suffix("/v1/metrics"))
        .unwrap_or(base);
    format!("{}/v1/{signal}", base.trim_end_matches('/'))
}

/// One script's records waiting to become spans.
#[derive(Debug)]
pub struct SpanQueue {
    pending: Mutex<Pending>,
    capacity: usize,
    /// Records dropped because the queue was full.
    dropped: AtomicU64,
}

#[derive(Debug, Default)]
struct Pending {
    /// Every record's bytes, back to back.
    bytes: Vec<u8>,
    /// `(stream id, offset, length)` of each record in `bytes`.
    records: Vec<(u32, u32, u32)>,
    /// When the oldest waiting record came.
    since: Option<Instant>,
}

impl SpanQueue {
    pub fn new(capacity: usize) -> SpanQueue {
        SpanQueue {
            pending: Mutex::new(Pending::default()),
            capacity: capacity.max(1),
            dropped: AtomicU64::new(0),
        }
    }

    /// Queues a copy of one record of stream `id` (the event loop's whole
    /// part in export: a lock and a copy).
    pub fn push(&self, id: usize, bytes: &[u8]) {
        let Ok(mut p) = self.pending.lock() else {
            return;
        };
        if p.records.len() >= self.capacity {
            drop(p);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let at = p.bytes.len() as u32;
        p.bytes.extend_from_slice(bytes);
        p.records.push((id as u32, at, bytes.len() as u32));
        p.since.get_or_insert_with(Instant::now);
    }

    /// How many records wait, and since when.
    fn waiting(&self) -> (usize, Option<Instant>) {
        self.pending
            .lock()
            .map(|p| (p.records.len(), p.since))
            .unwrap_or((0, None))
    }

    /// Takes everything waiting.
    fn take(&self) -> Pending {
        self.pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// What the exporter did, for the report at exit.
#[derive(Debug, Default)]
pub struct OtlpReport {
    /// Stream records sent (each is a root span and its stage children).
    pub records_sent: AtomicU64,
    pub spans_sent: AtomicU64,
    /// Records the collector never took: failed after every retry, refused
    /// (4xx), or rejected in a partial success.
    pub records_failed: AtomicU64,
    /// Metric snapshots sent.
    pub snapshots_sent: AtomicU64,
    pub snapshots_failed: AtomicU64,
    /// Bytes of the request bodies the collector took.
    pub bytes_sent: AtomicU64,
    /// The last failure, said at exit.
    pub last_error: Mutex<Option<String>>,
}

/// The exporter thread; [`OtlpExporter::finish`] flushes and stops it.
pub struct OtlpExporter {
    stop: Arc<AtomicBool>,
    report: Arc<OtlpReport>,
    targets: Arc<Targets>,
    thread: Option<JoinHandle<()>>,
    url: String,
}

/// How long the last flush at exit may take.
const FLUSH_DEADLINE: Duration = Duration::from_secs(5);
/// Attempts to send one batch while running.
const ATTEMPTS: u32 = 5;
/// The first wait before a retry; each retry waits twice as long.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest a `Retry-After` is honoured.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

impl OtlpExporter {
    pub fn start(
        options: OtlpOptions,
        targets: Arc<Targets>,
        clock: Clock,
        seed: u64,
    ) -> std::io::Result<OtlpExporter> {
        let stop = Arc::new(AtomicBool::new(false));
        let report = Arc::new(OtlpReport::default());
        let url = format!(
            "http://{}:{}{}",
            options.url.host,
            options.url.port,
            options.traces_path()
        );
        let mut worker = Worker {
            client: Client::new(options.url.clone(), Duration::from_secs(10)),
            options,
            targets: Arc::clone(&targets),
            report: Arc::clone(&report),
            stop: Arc::clone(&stop),
            clock,
            ids: SpanIds::new(seed),
            cgroups: CgroupPaths::new(),
            started_unix_ns: clock.unix_ns(monotonic_ns()),
            last_snapshot: Instant::now(),
        };
        let thread = std::thread::Builder::new()
            .name("weft-otlp".into())
            .spawn(move || worker.run())?;
        Ok(OtlpExporter {
            stop,
            report,
            targets,
            thread: Some(thread),
            url,
        })
    }

    /// Sends what is still queued (within a few seconds), stops the thread,
    /// and returns the lines to print: what was lost, if anything.
    pub fn finish(mut self, verbose: bool) -> Vec<String> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let r = &self.report;
        let queue_full: u64 = self
            .targets
            .current()
            .iter()
            .filter_map(|t| t.streams.spans.as_ref())
            .map(|q| q.dropped())
            .sum();
        let sent = r.records_sent.load(Ordering::Relaxed);
        let failed = r.records_failed.load(Ordering::Relaxed);
        let snapshots_failed = r.snapshots_failed.load(Ordering::Relaxed);
        let mut lines = Vec::new();
        if verbose || queue_full > 0 || failed > 0 || snapshots_failed > 0 {
            lines.push(format!(
                "weft: --otlp {}: {sent} stream records sent as {} spans, {} dropped ({queue_full} with the queue full, {failed} not taken by the collector); {} metric snapshots sent, {snapshots_failed} failed; {} bytes posted",
                self.url,
                r.spans_sent.load(Ordering::Relaxed),
                queue_full + failed,
                r.snapshots_sent.load(Ordering::Relaxed),
                r.bytes_sent.load(Ordering::Relaxed),
            ));
            if let Some(e) = r.last_error.lock().ok().and_then(|e| e.clone()) {
                lines.push(format!("weft: --otlp: the last failure: {e}"));
            }
        }
        lines
    }
}

impl Drop for OtlpExporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `CLOCK_MONOTONIC` now, in nanoseconds.
fn monotonic_ns() -> u64 {
    runtime::clock::monotonic_ns()
}

/// The offset from the kernel's clock (`bpf_ktime_get_ns`) to Unix time, now.
pub fn clock() -> Clock {
    Clock {
        offset_ns: runtime::clock::realtime_minus_monotonic_ns(),
    }
}

/// A seed for span ids from the kernel's random pool (time and pid if that fails).
pub fn seed() -> u64 {
    runtime::host::random_u64()
        .unwrap_or_else(|| monotonic_ns() ^ (u64::from(std::process::id()) << 32))
}

/// This machine's name (`host.name`).
pub fn host_name() -> String {
    runtime::host::name()
}

/// What one send came to.
enum Sent {
    /// Taken, with what a partial success rejected.
    Taken { rejected: u64 },
    /// Not taken, and worth trying again (no connection, 429, 502-504).
    Retry {
        why: String,
        after: Option<Duration>,
    },
    /// Not taken, and trying again would not help (another status).
    Refused(String),
}

struct Worker {
    client: Client,
    options: OtlpOptions,
    targets: Arc<Targets>,
    report: Arc<OtlpReport>,
    stop: Arc<AtomicBool>,
    clock: Clock,
    ids: SpanIds,
    cgroups: CgroupPaths,
    started_unix_ns: u64,
    last_snapshot: Instant,
}

impl Worker {
    fn run(&mut self) {
        loop {
            let stopping = self.stop.load(Ordering::SeqCst);
            let deadline = stopping.then(|| Instant::now() + FLUSH_DEADLINE);
            for target in self.targets.current() {
                let Some(queue) = target.streams.spans.as_ref() else {
                    continue;
                };
                let (waiting, since) = queue.waiting();
                let due = since.is_some_and(|t| t.elapsed() >= self.options.interval);
                if waiting > 0 && (stopping || due || waiting >= self.options.batch) {
                    self.send_spans(&target, queue, deadline);
                }
            }
            if let Some(every) = self.options.metrics_interval
                && (self.last_snapshot.elapsed() >= every || stopping)
            {
                self.last_snapshot = Instant::now();
                self.send_metrics(deadline);
            }
            if stopping {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn resource(&self, target: &Target) -> Vec<proto::KeyValue> {
        let mut attrs: Vec<proto::KeyValue> = self
            .options
            .resource
            .iter()
            .map(|(k, v)| otlp::kv_str(k, v.as_str()))
            .collect();
        attrs.push(otlp::kv_str("weft.script", target.name.as_str()));
        attrs
    }

    /// Sends everything queued for one script, in batches.
    fn send_spans(&mut self, target: &Target, queue: &SpanQueue, deadline: Option<Instant>) {
        let pending = queue.take();
        for chunk in pending.records.chunks(self.options.batch.max(1)) {
            let mut spans = Vec::with_capacity(chunk.len() * 2);
            for &(id, at, len) in chunk {
                let Some(spec) = target.manifest.streams.get(id as usize) else {
                    continue;
                };
                let bytes = &pending.bytes[at as usize..(at + len) as usize];
                let record = decode_stream_record(spec, bytes);
                let path = self.cgroups.v2_path(record.cgroup);
                otlp::record_spans(
                    &record,
                    self.clock,
                    path.as_deref(),
                    &mut self.ids,
                    &mut spans,
                );
            }
            let n_spans = spans.len() as u64;
            let body = otlp::encode(&otlp::traces_request(self.resource(target), spans));
            let path = self.options.traces_path();
            let records = chunk.len() as u64;
            match self.post_with_retries(&path, &body, deadline, otlp::traces_partial_success) {
                Ok(rejected) => {
                    self.report
                        .records_sent
                        .fetch_add(records, Ordering::Relaxed);
                    self.report
                        .spans_sent
                        .fetch_add(n_spans.saturating_sub(rejected), Ordering::Relaxed);
                    if rejected > 0 {
                        self.report
                            .records_failed
                            .fetch_add(rejected.min(records), Ordering::Relaxed);
                    }
                }
                Err(why) => {
                    self.report
                        .records_failed
                        .fetch_add(records, Ordering::Relaxed);
                    self.failed(why);
                }
            }
        }
    }

    /// Every exported map of every script, now, as OTLP metrics.
    fn send_metrics(&mut self, deadline: Option<Instant>) {
        let now = self.clock.unix_ns(monotonic_ns());
        for target in self.targets.current() {
            let mut metrics = Vec::new();
            for metric in &target.maps {
                let read = match super::read_map(&target, metric) {
                    Ok(r) => r,
                    Err(e) => {
                        self.failed(format!("reading {}: {e}", metric.spec.name));
                        continue;
                    }
                };
                let points = read
                    .samples()
                    .map(|(labels, value)| Point {
                        attributes: labels
                            .into_iter()
                            .map(|(k, v)| otlp::kv_str(&k, v))
                            .collect(),
                        value,
                    })
                    .collect();
                let unit = match (metric.kind, metric.name.rsplit('_').next()) {
                    (MetricKind::Counter, _)
                        if metric.spec.value == abi::MapValue::Agg(abi::Aggregation::Count) =>
                    {
                        "1"
                    }
                    (_, Some("seconds")) => "s",
                    (_, Some("bytes")) => "By",
                    _ => "",
                };
                metrics.push(otlp::metric(
                    &metric.name,
                    &metric.help,
                    unit,
                    metric.kind,
                    points,
                    self.started_unix_ns,
                    now,
                ));
            }
            if metrics.is_empty() {
                continue;
            }
            let body = otlp::encode(&otlp::metrics_request(self.resource(&target), metrics));
            let path = self.options.metrics_path();
            match self.post_with_retries(&path, &body, deadline, otlp::metrics_partial_success) {
                Ok(_) => {
                    self.report.snapshots_sent.fetch_add(1, Ordering::Relaxed);
                }
                Err(why) => {
                    self.report.snapshots_failed.fetch_add(1, Ordering::Relaxed);
                    self.failed(why);
                }
            }
        }
    }

    fn failed(&self, why: String) {
        if let Ok(mut e) = self.report.last_error.lock() {
            *e = Some(why);
        }
    }

    /// Posts `body`, trying again with growing waits while it is worth it:
    /// [`ATTEMPTS`] tries while running, until `deadline` when flushing at
    /// exit. Gives what a partial success rejected, or why it failed.
    fn post_with_retries(
        &mut self,
        path: &str,
        body: &[u8],
        deadline: Option<Instant>,
        partial: impl Fn(&[u8]) -> Option<proto::ExportPartialSuccess>,
    ) -> Result<u64, String> {
        let mut wait = FIRST_BACKOFF;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let why = match self.post(path, body, &partial) {
                Sent::Taken { rejected } => return Ok(rejected),
                Sent::Refused(why) => return Err(why),
                Sent::Retry { why, after } => {
                    wait = after.unwrap_or(wait).min(MAX_BACKOFF);
                    why
                }
            };
            let out_of_time = match deadline {
                Some(d) => Instant::now() + wait > d,
                None => attempt >= ATTEMPTS || self.stop.load(Ordering::SeqCst),
            };
            if out_of_time {
                return Err(why);
            }
            std::thread::sleep(wait);
            wait *= 2;
        }
    }

    fn post(
        &mut self,
        path: &str,
        body: &[u8],
        partial: &impl Fn(&[u8]) -> Option<proto::ExportPartialSuccess>,
    ) -> Sent {
        match self.client.post(path, "application/x-protobuf", body) {
            Ok(reply) if (200..300).contains(&reply.status) => {
                self.report
                    .bytes_sent
                    .fetch_add(body.len() as u64, Ordering::Relaxed);
                let rejected = partial(&reply.body).map_or(0, |p| {
                    if p.rejected > 0 || !p.error_message.is_empty() {
                        self.failed(format!(
                            "the collector rejected {}: {}",
                            p.rejected, p.error_message
                        ));
                    }
                    p.rejected.max(0) as u64
                });
                Sent::Taken { rejected }
            }
            Ok(reply) if matches!(reply.status, 429 | 502 | 503 | 504) => Sent::Retry {
                why: format!("{path}: HTTP {}", reply.status),
                after: reply.retry_after.map(Duration::from_secs),
            },
            Ok(reply) => Sent::Refused(format!(
                "{path}: HTTP {}: {}",
                reply.status,
                String::from_utf8_lossy(&reply.body[..reply.body.len().min(200)]).trim()
            )),
            Err(e) => Sent::Retry {
                why: format!("{path}: {e}"),
                after: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_paths_follow_the_otlp_endpoint_rules() {
        assert_eq!(signal_path("/", "traces"), "/v1/traces");
        assert_eq!(signal_path("", "metrics"), "/v1/metrics");
        assert_eq!(signal_path("/otlp/", "traces"), "/otlp/v1/traces");
        assert_eq!(signal_path("/v1/traces", "metrics"), "/v1/metrics");
        assert_eq!(signal_path("/x/v1/traces", "traces"), "/x/v1/traces");
    }

    #[test]
    fn a_full_queue_drops_and_counts() {
        let q = SpanQueue::new(2);
        q.push(0, b"abc");
        q.push(1, b"de");
        q.push(0, b"f");
        assert_eq!(q.dropped(), 1);
        let p = q.take();
        assert_eq!(p.records, [(0, 0, 3), (1, 3, 2)]);
        assert_eq!(p.bytes, b"abcde");
        assert_eq!(q.waiting().0, 0);
    }
}
