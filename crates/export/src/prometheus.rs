//! `--prometheus ADDR`: `/metrics` in the Prometheus text exposition format
//! (version 0.0.4), encoded by the `prometheus-client` crate.
//!
//! A scrape reads every exported map from the kernel at that moment (batch
//! lookups through each script's [`runtime::SessionReader`]), on the HTTP
//! server's thread, while the event loop goes on draining the ring buffer.
//! Nothing is streamed or cached between scrapes but the stream duration
//! histograms, which the event loop fills from the records it receives.
//!
//! At most `--prometheus-max-series` label sets of maps are written per
//! scrape (a histogram's label set counts once): past it each map keeps its
//! heaviest series, the rest are counted in `weft_series_dropped{map}` and
//! said once on stderr.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use abi::{CounterIndex, Layout, StreamCounter};
use output::StackResolver;
use output::metrics::{HistogramSample, MetricKind, SampleValue, own};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeLabelSet, LabelSetEncoder, MetricEncoder, NoLabelSet,
};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use runtime::symbols::{Kallsyms, UserSymbols};

pub use super::Targets;
use super::http::{Response, Server};
use super::{MapRead, Target, read_map, slot};

/// The default of `--prometheus-max-series`.
pub const DEFAULT_MAX_SERIES: usize = 10_000;

/// State kept between scrapes.
pub struct Exporter {
    targets: Arc<Targets>,
    max_series: usize,
    /// Maps already said on stderr to be over the series limit.
    warned: Mutex<HashSet<String>>,
    /// The kernel's symbols for stack and symbol labels, read on first use.
    kernel_symbols: Mutex<Option<Kallsyms>>,
    /// What `/healthz` answers (the agent says more than "ok").
    health: Box<dyn Fn() -> (bool, String) + Send + Sync>,
}

impl Exporter {
    pub fn new(targets: Arc<Targets>, max_series: usize) -> Exporter {
        Exporter {
            targets,
            max_series,
            warned: Mutex::new(HashSet::new()),
            kernel_symbols: Mutex::new(None),
            health: Box::new(|| (true, "ok\n".to_string())),
        }
    }

    /// Sets what `/healthz` answers: healthy or not, and the text.
    #[allow(dead_code)]
    pub fn with_health(
        mut self,
        health: impl Fn() -> (bool, String) + Send + Sync + 'static,
    ) -> Exporter {
        self.health = Box::new(health);
        self
    }

    /// Serves `/metrics` (and `/healthz`) on `address` until dropped.
    pub fn serve(self, address: std::net::SocketAddr) -> std::io::Result<Server> {
        let exporter = Arc::new(self);
        Server::start(address, move |request| exporter.answer(request.path))
    }

    fn answer(&self, path: &str) -> Response {
        match path {
            "/metrics" => Response {
                status: 200,
                content_type: prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
                body: self.scrape().into_bytes(),
            },
            "/healthz" => {
                let (healthy, text) = (self.health)();
                Response::text(if healthy { 200 } else { 503 }, text)
            }
            "/" => Response::text(
                200,
                "weft: the metrics are at /metrics, the health at /healthz\n",
            ),
            _ => Response::text(404, "not found: try /metrics\n"),
        }
    }

    /// One scrape: every exported map read now, as exposition text.
    pub fn scrape(&self) -> String {
        let started = Instant::now();
        let targets = self.targets.current();
        let mut budget = self.max_series;
        let mut maps = Vec::new();
        let mut errors = Vec::new();
        for (t, target) in targets.iter().enumerate() {
            for metric in &target.maps {
                match read_map(target, metric) {
                    Ok(read) => {
                        let mut read = self.bound(read, &mut budget, target.script.as_deref());
                        if key_needs_symbols(metric.spec.key.as_ref()) {
                            self.resolve_labels(target, &mut read);
                        }
                        maps.push((t, read));
                    }
                    Err(e) => errors.push(format!("{}: {e}", metric.spec.name)),
                }
            }
        }
        let read_seconds = started.elapsed().as_secs_f64();
        let scrape = Scrape {
            own: own_families(&targets, &maps, read_seconds),
            targets,
            maps,
        };
        let mut text = String::new();
        let mut registry = Registry::default();
        registry.register_collector(Box::new(scrape));
        if prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).is_err() {
            text.clear();
        }
        for e in errors {
            eprintln!("weft: --prometheus: reading {e}");
        }
        text
    }

    /// Names the stacks and symbols of a map's keys: user stacks with
    /// symbol tables made for this scrape (blazesym's stay on one thread),
    /// kernel ones with the exporter's.
    fn resolve_labels(&self, target: &Target, read: &mut MapRead) {
        let mut kernel = self
            .kernel_symbols
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut resolver = ReaderResolver {
            reader: &target.reader,
            kernel: &mut kernel,
            user: None,
        };
        let key_size = read.entries.key_size();
        let labels = read
            .selected
            .iter()
            .map(|&i| {
                let mut key = read
                    .metric
                    .key_values(slot(read.entries.keys(), key_size, i));
                for k in &mut key {
                    output::resolve_value(k, &mut resolver);
                }
                key.iter().map(output::metrics::label_value).collect()
            })
            .collect();
        read.labels = Some(labels);
    }

    /// Keeps at most `budget` series of a map (its heaviest), saying once
    /// on stderr when a map is cut.
    fn bound(&self, mut read: MapRead, budget: &mut usize, script: Option<&str>) -> MapRead {
        let count = read.entries.len();
        let keep = count.min(*budget);
        *budget -= keep;
        if keep < count {
            let metric = &read.metric;
            let entries = &read.entries;
            let value_size = entries.value_size();
            let key_size = entries.key_size();
            read.selected = output::metrics::select_heaviest(
                count,
                keep,
                |i| metric.weight(slot(entries.values(), value_size, i)),
                |i| slot(entries.keys(), key_size, i),
            );
            read.dropped = count - keep;
            let who = match script {
                Some(s) => format!("{s}: {}", read.metric.spec.name),
                None => read.metric.spec.name.clone(),
            };
            let first = self
                .warned
                .lock()
                .map(|mut w| w.insert(who.clone()))
                .unwrap_or(false);
            if first {
                eprintln!(
                    "weft: --prometheus-max-series {}: {who} has {count} series, {} exported (the heaviest); the rest are counted in {}",
                    self.max_series,
                    keep,
                    own::SERIES_DROPPED
                );
            }
        }
        read
    }
}

/// A family whose series are all built already (weft's own metrics).
struct OwnedFamily {
    name: &'static str,
    help: &'static str,
    kind: MetricKind,
    series: Vec<(Vec<(&'static str, String)>, SampleValue)>,
}

impl OwnedFamily {
    fn new(name: &'static str, help: &'static str, kind: MetricKind) -> OwnedFamily {
        OwnedFamily {
            name,
            help,
            kind,
            series: Vec::new(),
        }
    }

    fn push(&mut self, labels: Vec<(&'static str, String)>, value: SampleValue) {
        self.series.push((labels, value));
    }
}

/// The `script` label of a target, first of its labels.
fn script_label(target: &Target) -> Vec<(&'static str, String)> {
    target
        .script
        .iter()
        .map(|s| ("script", s.clone()))
        .collect()
}

fn with(
    mut labels: Vec<(&'static str, String)>,
    more: &[(&'static str, &str)],
) -> Vec<(&'static str, String)> {
    labels.extend(more.iter().map(|(k, v)| (*k, v.to_string())));
    labels
}

/// weft's own metrics: losses, map sizes, series dropped, streams, program
/// statistics, and how long the maps took to read.
fn own_families(
    targets: &[Arc<Target>],
    maps: &[(usize, MapRead)],
    read_seconds: f64,
) -> Vec<OwnedFamily> {
    let mut events_lost = OwnedFamily::new(
        own::EVENTS_LOST,
        "Events dropped because the ring buffer was full",
        MetricKind::Counter,
    );
    let mut map_lost = OwnedFamily::new(
        own::MAP_UPDATES_LOST,
        "Map updates that failed because the map was full",
        MetricKind::Counter,
    );
    let mut entries = OwnedFamily::new(
        own::MAP_ENTRIES,
        "Keys in the map at this scrape",
        MetricKind::Gauge,
    );
    let mut capacity = OwnedFamily::new(
        own::MAP_CAPACITY,
        "The most keys the map can hold",
        MetricKind::Gauge,
    );
    let mut dropped = OwnedFamily::new(
        own::SERIES_DROPPED,
        "Series of the map left out of this scrape by --prometheus-max-series",
        MetricKind::Gauge,
    );
    let mut duration = OwnedFamily::new(
        own::STREAM_DURATION,
        "Duration of stream instances from begin to end, from the records received",
        MetricKind::Histogram,
    );
    let mut stage = OwnedFamily::new(
        own::STREAM_STAGE_DURATION,
        "Time from a stream's previous stage to this one, from the records received",
        MetricKind::Histogram,
    );
    let mut instances = OwnedFamily::new(
        own::STREAM_INSTANCES,
        "Stream instances by how they ended: completed, timed_out, replaced, evicted (by the map limit), refused (map full) or sampled_out (not begun: `sample N`)",
        MetricKind::Counter,
    );
    let mut runs = OwnedFamily::new(
        own::PROGRAM_RUNS,
        "Times the probe's BPF program ran (while BPF run statistics are on)",
        MetricKind::Counter,
    );
    let mut run_time = OwnedFamily::new(
        own::PROGRAM_RUN_TIME,
        "Time the probe's BPF program ran (while BPF run statistics are on)",
        MetricKind::Counter,
    );
    let program_stats = super::program_stats_wanted();
    for (t, target) in targets.iter().enumerate() {
        let base = script_label(target);
        match target.reader.counters() {
            Ok(c) => {
                events_lost.push(
                    base.clone(),
                    SampleValue::Unsigned(c[CounterIndex::RingbufFull as usize]),
                );
                map_lost.push(
                    base.clone(),
                    SampleValue::Unsigned(c[CounterIndex::MapFull as usize]),
                );
            }
            Err(e) => eprintln!("weft: --prometheus: reading the loss counters: {e}"),
        }
        for (_, read) in maps.iter().filter(|(i, _)| *i == t) {
            let map = [("map", read.metric.spec.name.as_str())];
            entries.push(
                with(base.clone(), &map),
                SampleValue::Unsigned(read.entries.len() as u64),
            );
            capacity.push(
                with(base.clone(), &map),
                SampleValue::Unsigned(u64::from(read.metric.spec.max_entries)),
            );
            dropped.push(
                with(base.clone(), &map),
                SampleValue::Unsigned(read.dropped as u64),
            );
        }
        for (id, spec) in target.manifest.streams.iter().enumerate() {
            let stream = [("stream", spec.name.as_str())];
            if let Some(h) = target.streams.metrics.streams.get(id) {
                duration.push(
                    with(base.clone(), &stream),
                    SampleValue::Histogram(h.total.sample()),
                );
                for (name, hist) in &h.stages {
                    stage.push(
                        with(
                            base.clone(),
                            &[("stream", spec.name.as_str()), ("stage", name.as_str())],
                        ),
                        SampleValue::Histogram(hist.sample()),
                    );
                }
            }
            let counters = match target.reader.stream_counters(spec) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!(
                        "weft: --prometheus: reading stream {}'s counters: {e}",
                        spec.name
                    );
                    continue;
                }
            };
            let open = target.reader.map_len(&spec.state_map).unwrap_or(0) as u64;
            let losses =
                tracer::streams::Losses::account(&counters, target.streams.expired_user(id), open);
            let evicted = target.streams.monotonic_evicted(id, losses.evicted);
            for (outcome, n) in [
                ("completed", counters[StreamCounter::Completed as usize]),
                ("timed_out", losses.timed_out),
                ("replaced", losses.replaced),
                ("evicted", evicted),
                ("refused", losses.refused),
                ("sampled_out", counters[StreamCounter::SampledOut as usize]),
            ] {
                instances.push(
                    with(
                        base.clone(),
                        &[("stream", spec.name.as_str()), ("outcome", outcome)],
                    ),
                    SampleValue::Unsigned(n),
                );
            }
        }
        if program_stats {
            match target.reader.program_stats() {
                Ok(stats) => {
                    for s in stats {
                        let probe = target
                            .manifest
                            .programs
                            .iter()
                            .find(|p| p.name == s.name)
                            .map_or(s.name.as_str(), |p| p.probe.as_str());
                        let labels = with(
                            base.clone(),
                            &[("probe", probe), ("program", s.name.as_str())],
                        );
                        runs.push(labels.clone(), SampleValue::Unsigned(s.run_count));
                        run_time.push(labels, SampleValue::Float(s.run_time_ns as f64 / 1e9));
                    }
                }
                Err(e) => eprintln!("weft: --prometheus: reading program statistics: {e}"),
            }
        }
    }
    let mut scrape = OwnedFamily::new(
        own::SCRAPE_SECONDS,
        "Time this scrape took to read the maps from the kernel",
        MetricKind::Gauge,
    );
    scrape.push(Vec::new(), SampleValue::Float(read_seconds));
    let mut build = OwnedFamily::new(
        own::BUILD_INFO,
        "The weft serving these metrics",
        MetricKind::Gauge,
    );
    build.push(
        vec![("version", env!("CARGO_PKG_VERSION").to_string())],
        SampleValue::Unsigned(1),
    );
    [
        build,
        events_lost,
        map_lost,
        entries,
        capacity,
        dropped,
        scrape,
        duration,
        stage,
        instances,
        runs,
        run_time,
    ]
    .into_iter()
    .filter(|f| !f.series.is_empty())
    .collect()
}

/// Everything one scrape writes, owned so that `prometheus-client` can
/// hold it as a collector.
struct Scrape {
    targets: Vec<Arc<Target>>,
    maps: Vec<(usize, MapRead)>,
    own: Vec<OwnedFamily>,
}

impl fmt::Debug for Scrape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scrape")
            .field("maps", &self.maps.len())
            .finish()
    }
}

fn metric_type(kind: MetricKind) -> MetricType {
    match kind {
        MetricKind::Counter => MetricType::Counter,
        MetricKind::Gauge => MetricType::Gauge,
        MetricKind::Histogram => MetricType::Histogram,
    }
}

/// A series' labels: the fixed ones (`script`, ...) then the key's.
struct Labels<'a> {
    fixed: &'a [(&'static str, String)],
    names: &'a [String],
    values: &'a [String],
}

impl EncodeLabelSet for Labels<'_> {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> fmt::Result {
        for (name, value) in self.fixed {
            prometheus_client::encoding::EncodeLabel::encode(
                &(*name, value.as_str()),
                encoder.encode_label(),
            )?;
        }
        for (name, value) in self.names.iter().zip(self.values) {
            prometheus_client::encoding::EncodeLabel::encode(
                &(name.as_str(), value.as_str()),
                encoder.encode_label(),
            )?;
        }
        Ok(())
    }
}

fn encode_value(
    encoder: &mut MetricEncoder<'_>,
    kind: MetricKind,
    value: &SampleValue,
) -> fmt::Result {
    match (kind, value) {
        (
            _,
            SampleValue::Histogram(HistogramSample {
                buckets,
                sum,
                count,
            }),
        ) => encoder.encode_histogram::<NoLabelSet>(*sum, *count, buckets, None),
        (MetricKind::Counter, SampleValue::Unsigned(v)) => {
            encoder.encode_counter::<NoLabelSet, _, f64>(v, None)
        }
        (MetricKind::Counter, v) => encoder.encode_counter::<NoLabelSet, _, f64>(&v.as_f64(), None),
        (_, SampleValue::Unsigned(v)) => encoder.encode_gauge(v),
        (_, SampleValue::Signed(v)) => encoder.encode_gauge(v),
        (_, SampleValue::Float(v)) => encoder.encode_gauge(v),
    }
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        for family in &self.own {
            let kind = family.kind;
            let mut fam =
                encoder.encode_descriptor(family.name, family.help, None, metric_type(kind))?;
            for (labels, value) in &family.series {
                let labels = Labels {
                    fixed: labels,
                    names: &[],
                    values: &[],
                };
                let mut series = fam.encode_family(&labels)?;
                encode_value(&mut series, kind, value)?;
            }
        }
        // Maps of the same name (the same script under several names, in
        // agent mode) are one family: written together, under one header.
        let mut written: HashSet<&str> = HashSet::new();
        for (first, (_, read)) in self.maps.iter().enumerate() {
            let metric = &read.metric;
            if !written.insert(metric.name.as_str()) {
                continue;
            }
            let mut fam = encoder.encode_descriptor(
                &metric.name,
                &metric.help,
                None,
                metric_type(metric.kind),
            )?;
            for (t, read) in self.maps[first..]
                .iter()
                .filter(|(_, r)| r.metric.name == metric.name && r.metric.kind == metric.kind)
            {
                let fixed = script_label(&self.targets[*t]);
                let key_size = read.entries.key_size();
                let value_size = read.entries.value_size();
                if read.unfired {
                    let zero = vec![0u8; output::merged_value_size(&read.metric.spec.value, 16)];
                    let labels = Labels {
                        fixed: &fixed,
                        names: &[],
                        values: &[],
                    };
                    let mut series = fam.encode_family(&labels)?;
                    encode_value(
                        &mut series,
                        read.metric.kind,
                        &read.metric.sample(&zero, &read.buckets),
                    )?;
                }
                let mut decoded = Vec::new();
                for (n, &i) in read.selected.iter().enumerate() {
                    let values = match &read.labels {
                        Some(all) => &all[n],
                        None => {
                            let key =
                                read.metric
                                    .key_values(slot(read.entries.keys(), key_size, i));
                            decoded.clear();
                            decoded.extend(key.iter().map(output::metrics::label_value));
                            &decoded
                        }
                    };
                    let labels = Labels {
                        fixed: &fixed,
                        names: &read.metric.labels,
                        values,
                    };
                    let value = read
                        .metric
                        .sample(slot(read.entries.values(), value_size, i), &read.buckets);
                    let mut series = fam.encode_family(&labels)?;
                    encode_value(&mut series, read.metric.kind, &value)?;
                }
            }
        }
        Ok(())
    }
}

/// Whether a key holds stacks or symbols, which need resolving.
fn key_needs_symbols(layout: Option<&Layout>) -> bool {
    match layout {
        Some(Layout::KStack { .. } | Layout::UStack { .. } | Layout::KSym | Layout::USym) => true,
        Some(Layout::Tuple { fields, .. }) => {
            fields.iter().any(|f| key_needs_symbols(Some(&f.layout)))
        }
        _ => false,
    }
}

/// Stacks read through a script's reader and named with the kernel's
/// symbols and, made when first needed, user symbol tables.
struct ReaderResolver<'a> {
    reader: &'a runtime::SessionReader,
    kernel: &'a mut Option<Kallsyms>,
    user: Option<UserSymbols>,
}

impl StackResolver for ReaderResolver<'_> {
    fn frames(&mut self, stack: &output::Stack) -> Vec<output::Frame> {
        let Ok(id) = u32::try_from(stack.id) else {
            return Vec::new();
        };
        let map = abi::stack::stack_map_name(stack.limit);
        let addrs = self.reader.stack_addresses(&map, id).unwrap_or_default();
        let names: Vec<Option<runtime::symbols::ResolvedSymbol>> = if stack.user {
            self.user
                .get_or_insert_with(UserSymbols::new)
                .frames(stack.pid, &addrs)
        } else {
            let kernel = self.kernel.get_or_insert_with(Kallsyms::load);
            addrs
                .iter()
                .enumerate()
                .map(|(i, &a)| kernel.lookup_frame(a, i == 0))
                .collect()
        };
        addrs
            .iter()
            .zip(names)
            .map(|(&addr, s)| output::Frame {
                addr,
                symbol: s.map(|s| output::Symbol {
                    name: s.name,
                    offset: s.offset,
                    module: s.module,
                }),
                file: None,
            })
            .collect()
    }

    fn symbol(&mut self, user: bool, addr: u64, pid: u32) -> Option<String> {
        let found = if user {
            self.user
                .get_or_insert_with(UserSymbols::new)
                .lookup(pid, &[addr])
                .pop()
                .flatten()
        } else {
            self.kernel.get_or_insert_with(Kallsyms::load).lookup(addr)
        };
        found.map(|s| s.name)
    }
}
