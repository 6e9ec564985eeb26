//! User-space bookkeeping of `stream`s: their records go to the sink (and to
//! the `--timeline` file), a periodic sweep expires instances older than the
//! stream's timeout that no probe came back to, and at exit every instance
//! that was lost or left is accounted for on stderr.
//!
//! The decisions (which entries expired, how many instances the LRU map
//! evicted, what the report says) are pure functions, tested below; the
//! [`Streams`] glue around them does the map calls.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use abi::stream::STREAM_START_OFFSET;
use abi::{Manifest, StreamCounter, StreamSpec};
use output::{Sink, StackResolver, TimelineWriter, decode_stream_record};
use runtime::{MapEntry, Session};

use crate::run_error::RunError;
use crate::stacks::Symbols;

/// How often the state maps are swept while the script runs.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// `start_ns` of a state-map value (laid out like a stream record); 0 if short.
pub fn start_ns(value: &[u8]) -> u64 {
    let at = STREAM_START_OFFSET as usize;
    value
        .get(at..at + 8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
}

/// Whether an instance begun at `start_ns` has outlived `timeout_ns` at
/// `now_ns` (both CLOCK_MONOTONIC, like `bpf_ktime_get_ns`). A timeout of 0
/// means the stream has none.
pub fn is_expired(start_ns: u64, now_ns: u64, timeout_ns: u64) -> bool {
    timeout_ns != 0 && now_ns.saturating_sub(start_ns) > timeout_ns
}

/// Indexes of the state-map entries that expired at `now_ns`.
pub fn select_expired(entries: &[MapEntry], now_ns: u64, timeout_ns: u64) -> Vec<usize> {
    entries
        .iter()
        .enumerate()
        .filter(|(_, (_, values))| {
            let value = values.first().map_or(&[][..], Vec::as_slice);
            is_expired(start_ns(value), now_ns, timeout_ns)
        })
        .map(|(index, _)| index)
        .collect()
}

/// The links an instance's record says it was filed under: per link slot
/// whose bit is set in `links_filed`, the slot's map and the last key filed
/// there (see `abi::stream`).
pub fn filed_links<'a>(spec: &'a StreamSpec, record: &'a [u8]) -> Vec<(&'a str, &'a [u8])> {
    let at = spec.links_filed_offset as usize;
    let filed = record
        .get(at..at + 8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
    spec.links
        .iter()
        .enumerate()
        .filter(|(slot, _)| *slot < 64 && filed & (1 << slot) != 0)
        .filter_map(|(_, link)| {
            let from = link.key_offset as usize;
            let key = record.get(from..from + link.key_size as usize)?;
            Some((link.map.as_str(), key))
        })
        .collect()
}

/// Whether a link map's value (the begin key, then the instance's
/// `start_ns: u64`) names the instance `(begin key, start_ns)`: a key
/// reused by a newer instance names that one instead.
pub fn names_instance(link_value: &[u8], begin_key: &[u8], start_ns: u64) -> bool {
    link_value.get(..begin_key.len()) == Some(begin_key)
        && link_value.get(begin_key.len()..begin_key.len() + 8) == Some(&start_ns.to_le_bytes()[..])
}

/// What became of a stream's instances that did not complete.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Losses {
    /// Expired by a probe (in the kernel) or by the user-space sweep.
    pub timed_out: u64,
    /// A begin found an open instance under the same key and replaced it.
    pub replaced: u64,
    /// The state map refused a new instance (never counted as begun).
    pub refused: u64,
    /// Evicted by the LRU state map when full: the kernel does this silently,
    /// so it is what remains of `begun` once everything else is counted.
    pub evicted: u64,
    /// Still in the state map when the run ended.
    pub open: u64,
    /// `queue N`: pushed out by a begin that found N open under its key.
    pub overflowed: u64,
}

impl Losses {
    /// Accounts for every instance begun: the kernel's counters
    /// (indexed by [`StreamCounter`]), the instances the sweep expired and
    /// the number still open. `Begun` counts the instances the state map
    /// took (a refused one is counted in `MapFull` only), so
    /// `evicted = begun − completed − expired(kernel) − expired(user) − replaced − overflowed − open`.
    pub fn account(counters: &[u64], expired_user: u64, open: u64) -> Losses {
        let slot = |c: StreamCounter| counters.get(c as usize).copied().unwrap_or(0);
        let timed_out = slot(StreamCounter::Expired).saturating_add(expired_user);
        let replaced = slot(StreamCounter::Replaced);
        let refused = slot(StreamCounter::MapFull);
        let overflowed = slot(StreamCounter::QueueOverflow);
        let evicted = slot(StreamCounter::Begun)
            .saturating_sub(slot(StreamCounter::Completed))
            .saturating_sub(timed_out)
            .saturating_sub(replaced)
            .saturating_sub(overflowed)
            .saturating_sub(open);
        Losses {
            timed_out,
            replaced,
            refused,
            evicted,
            open,
            overflowed,
        }
    }

    /// One line for stderr, or `None` when nothing was lost or left:
    /// `weft: stream read_req: 3 timed out, 1 replaced, 2 evicted by the map
    /// limit (max 10240), 4 still open at exit`.
    pub fn report(&self, stream: &str, max_instances: u32) -> Option<String> {
        let mut parts = Vec::new();
        if self.timed_out > 0 {
            parts.push(format!("{} timed out", self.timed_out));
        }
        if self.replaced > 0 {
            parts.push(format!("{} replaced", self.replaced));
        }
        if self.overflowed > 0 {
            parts.push(format!("{} pushed out of a full queue", self.overflowed));
        }
        if self.refused > 0 {
            parts.push(format!("{} refused by the full state map", self.refused));
        }
        if self.evicted > 0 {
            parts.push(format!(
                "{} evicted by the map limit (max {max_instances})",
                self.evicted
            ));
        }
        if self.open > 0 {
            parts.push(format!("{} still open at exit", self.open));
        }
        (!parts.is_empty()).then(|| format!("weft: stream {stream}: {}", parts.join(", ")))
    }
}

/// `sample N`: the rate, and how many instances were seen and begun
/// (`weft: stream ppid: sampled 1 in 10: 98 of 1012 instances begun; each
/// record stands for 10`); `None` for a stream that is not sampled.
pub fn sampling_report(spec: &abi::StreamSpec, counters: &[u64]) -> Option<String> {
    if spec.sample <= 1 {
        return None;
    }
    let slot = |c: StreamCounter| counters.get(c as usize).copied().unwrap_or(0);
    let begun = slot(StreamCounter::Begun) + slot(StreamCounter::MapFull);
    let seen = begun + slot(StreamCounter::SampledOut);
    Some(format!(
        "weft: stream {}: sampled 1 in {}: {begun} of {seen} instances begun; each record stands for {} (args->sample in a handler)",
        spec.name, spec.sample, spec.sample
    ))
}

/// Stage times that other CPUs kept changing while one settled them (see
/// `StreamCounter::TimeContended`): `None` when there were none.
pub fn contention_report(spec: &abi::StreamSpec, counters: &[u64]) -> Option<String> {
    let n = counters
        .get(StreamCounter::TimeContended as usize)
        .copied()
        .unwrap_or(0);
    (n > 0).then(|| {
        format!(
            "weft: stream {}: {n} stage times left to other CPUs that kept storing times of the same instance at once (a stage's first or last time may be off by the time between those hits)",
            spec.name
        )
    })
}

/// What to warn about before a run with `--timeline PATH`: a stream whose
/// handler never calls `emit()` sends no completed record to the timeline.
pub fn timeline_warnings(manifest: &Manifest, path: &std::path::Path) -> Vec<String> {
    manifest
        .streams
        .iter()
        .filter(|s| !s.emits_records)
        .map(|s| {
            format!(
                "WARNING: --timeline {}: the handler of stream {} never calls emit(), so its records do not reach the timeline",
                path.display(),
                s.name
            )
        })
        .collect()
}

/// `CLOCK_MONOTONIC` now, in nanoseconds (the clock of `bpf_ktime_get_ns`).
fn monotonic_ns() -> u64 {
    runtime::clock::monotonic_ns()
}

/// Who is told about a run's streams besides its sinks (the exporters):
/// each record that reaches user space, and each instance the user-space
/// sweep expired. Called on the event loop's thread: keep it short.
pub trait StreamObserver: Send + Sync {
    /// One record of stream `id`: `bytes` as received, `record` decoded.
    fn record(&self, id: usize, bytes: &[u8], record: &output::StreamRecord<'_>);
    /// The sweep expired one instance of stream `id`.
    fn expired(&self, id: usize);
}

/// The `--timeline` file being gathered.
struct Timeline {
    writer: TimelineWriter,
    file: File,
    path: PathBuf,
}

/// The run's stream state: where records go and what the sweep expired.
pub struct Streams {
    /// Per stream: instances the sweep expired.
    expired_user: Vec<u64>,
    timeline: Option<Timeline>,
    last_sweep: Instant,
    /// The exporters' view: each record and each expiry.
    tap: Option<Arc<dyn StreamObserver>>,
    /// Cgroup ids back to paths, for the records (made on the first record).
    cgroups: Option<runtime::cgroups::CgroupPaths>,
}

impl Streams {
    /// `timeline`: the `--timeline` file, already created; `tap`: the
    /// exporters' view of the records, if any.
    pub fn new(
        manifest: &Manifest,
        timeline: Option<(PathBuf, File)>,
        tap: Option<Arc<dyn StreamObserver>>,
    ) -> Streams {
        Streams {
            expired_user: vec![0; manifest.streams.len()],
            timeline: timeline.map(|(path, file)| Timeline {
                writer: TimelineWriter::new(),
                file,
                path,
            }),
            last_sweep: Instant::now(),
            tap,
            cgroups: None,
        }
    }

    /// Sends one stream record (or state-map value) of stream `id` to the
    /// sink and the timeline. Unknown ids are ignored, like other kinds.
    /// A record holding stacks or symbols needs `resolver` (the session's
    /// maps and symbol tables): without one, nothing is written and `false`
    /// is returned, so the caller can hand the record back once the session
    /// is free.
    pub fn record(
        &mut self,
        manifest: &Manifest,
        id: usize,
        bytes: &[u8],
        sink: &mut dyn Sink,
        resolver: Option<&mut dyn StackResolver>,
    ) -> io::Result<bool> {
        let Some(spec) = manifest.streams.get(id) else {
            return Ok(true);
        };
        let mut record = decode_stream_record(spec, bytes);
        record.cgroup_path = self
            .cgroups
            .get_or_insert_with(runtime::cgroups::CgroupPaths::new)
            .v2_path(record.cgroup);
        if record
            .fields
            .iter()
            .any(|(_, v)| output::stack::needs_resolving(v))
        {
            let Some(resolver) = resolver else {
                return Ok(false);
            };
            for (_, value) in &mut record.fields {
                output::resolve_value(value, resolver);
            }
        }
        if let Some(tap) = &self.tap {
            tap.record(id, bytes, &record);
        }
        sink.stream_record(&record)?;
        if let Some(t) = self.timeline.as_mut() {
            t.writer.push(&record);
        }
        Ok(true)
    }

    /// Sweeps the state maps when [`SWEEP_INTERVAL`] has passed since the last sweep.
    pub fn tick(
        &mut self,
        session: &Session,
        manifest: &Manifest,
        sink: &mut dyn Sink,
        symbols: &mut Symbols,
    ) -> Result<(), RunError> {
        if manifest.streams.is_empty() || self.last_sweep.elapsed() < SWEEP_INTERVAL {
            return Ok(());
        }
        self.last_sweep = Instant::now();
        let now = monotonic_ns();
        for id in 0..manifest.streams.len() {
            self.sweep(session, manifest, id, now, sink, symbols)?;
        }
        Ok(())
    }

    /// Deletes the expired instances of one stream (emitting them as
    /// incomplete records when the stream asks for it) and the links to them.
    fn sweep(
        &mut self,
        session: &Session,
        manifest: &Manifest,
        id: usize,
        now_ns: u64,
        sink: &mut dyn Sink,
        symbols: &mut Symbols,
    ) -> Result<(), RunError> {
        let Some(spec) = manifest.streams.get(id) else {
            return Ok(());
        };
        if spec.timeout_ns == 0 {
            return Ok(());
        }
        let entries = session.map_entries(&spec.state_map)?;
        for index in select_expired(&entries, now_ns, spec.timeout_ns) {
            let key = &entries[index].0;
            // The instance may have ended, and another begun under the same
            // key, since the map was read: look again right before deleting.
            let Some(values) = session.lookup_key(&spec.state_map, key)? else {
                continue;
            };
            let value = values.into_iter().next().unwrap_or_default();
            if !is_expired(start_ns(&value), now_ns, spec.timeout_ns) {
                continue;
            }
            if !session.delete_key(&spec.state_map, key)? {
                continue;
            }
            if let Some(n) = self.expired_user.get_mut(id) {
                *n += 1;
            }
            if let Some(tap) = &self.tap {
                tap.expired(id);
            }
            if spec.emit_incomplete {
                self.record(
                    manifest,
                    id,
                    &value,
                    sink,
                    Some(&mut symbols.resolver(session)),
                )
                .map_err(RunError::Output)?;
            }
            // Its links, unless a newer instance took the key over.
            for (map, link_key) in filed_links(spec, &value) {
                let names = |v: Option<Vec<Vec<u8>>>| {
                    v.and_then(|v| v.into_iter().next())
                        .is_some_and(|v| names_instance(&v, key, start_ns(&value)))
                };
                if names(session.lookup_key(map, link_key)?) {
                    session.delete_key(map, link_key)?;
                }
            }
        }
        Ok(())
    }

    /// At exit, after END: a last sweep, the instances still open (emitted
    /// as incomplete records when the stream asks for it), the timeline file
    /// written. Returns the lines to print on stderr.
    pub fn finish(
        &mut self,
        session: &Session,
        manifest: &Manifest,
        sink: &mut dyn Sink,
        symbols: &mut Symbols,
    ) -> Result<Vec<String>, RunError> {
        let mut report = Vec::new();
        let now = monotonic_ns();
        for (id, spec) in manifest.streams.iter().enumerate() {
            self.sweep(session, manifest, id, now, sink, symbols)?;
            let mut open = session.map_entries(&spec.state_map)?;
            if spec.emit_incomplete {
                open.sort_by_key(|(_, values)| values.first().map_or(0, |v| start_ns(v)));
                for (_, values) in &open {
                    let value = values.first().map_or(&[][..], Vec::as_slice);
                    self.record(
                        manifest,
                        id,
                        value,
                        sink,
                        Some(&mut symbols.resolver(session)),
                    )
                    .map_err(RunError::Output)?;
                }
            }
            let counters = session.stream_counters(spec)?;
            let expired_user = self.expired_user.get(id).copied().unwrap_or(0);
            let losses = Losses::account(&counters, expired_user, open.len() as u64);
            report.extend(sampling_report(spec, &counters));
            report.extend(contention_report(spec, &counters));
            report.extend(losses.report(&spec.name, spec.max_instances));
        }
        if let Some(t) = self.timeline.take() {
            let mut out = BufWriter::new(&t.file);
            t.writer
                .write_to(&mut out)
                .and_then(|()| out.flush())
                .map_err(|e| {
                    RunError::Output(io::Error::new(
                        e.kind(),
                        format!("timeline {}: {e}", t.path.display()),
                    ))
                })?;
            if t.writer.dropped() > 0 {
                report.push(format!(
                    "weft: timeline {}: kept the first {} stream records, left out {} more",
                    t.path.display(),
                    t.writer.max_records(),
                    t.writer.dropped()
                ));
            }
            if manifest.streams.is_empty() {
                report.push(format!(
                    "weft: timeline {}: the script has no stream, so it has no events",
                    t.path.display()
                ));
            }
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: u8, start: u64) -> MapEntry {
        let mut value = vec![0u8; 64];
        value[8..16].copy_from_slice(&start.to_le_bytes());
        (vec![key; 4], vec![value])
    }

    #[test]
    fn expiry_is_strictly_older_than_the_timeout() {
        assert!(!is_expired(100, 150, 50));
        assert!(is_expired(100, 151, 50));
        // A start after now (read before a begin) is not expired.
        assert!(!is_expired(200, 150, 50));
        // No timeout, never expired.
        assert!(!is_expired(0, u64::MAX, 0));
    }

    #[test]
    fn sweep_selects_old_entries_only() {
        let entries = vec![
            entry(1, 1_000),
            entry(2, 9_000),
            entry(3, 4_999),
            entry(4, 5_000),
        ];
        assert_eq!(select_expired(&entries, 10_000, 5_000), [0, 2]);
        assert_eq!(select_expired(&entries, 10_000, 0), Vec::<usize>::new());
        // Short or missing values read as start 0: expired once past the timeout.
        let broken: Vec<MapEntry> = vec![(vec![9], vec![vec![1, 2]]), (vec![8], vec![])];
        assert_eq!(select_expired(&broken, 10_000, 5_000), [0, 1]);
        assert_eq!(select_expired(&broken, 4_000, 5_000), Vec::<usize>::new());
    }

    fn linked_spec() -> StreamSpec {
        let link = |slot: usize, key_offset: u32| abi::StreamLink {
            name: format!("slot{slot}"),
            map: format!("l{slot}"),
            key_offset,
            key_size: 8,
        };
        StreamSpec {
            name: "s".into(),
            state_map: "st".into(),
            links: vec![link(0, 64), link(1, 72), link(2, 80)],
            links_filed_offset: 56,
            counters_map: "c".into(),
            record_size: 88,
            stages: Vec::new(),
            fields: Vec::new(),
            timeout_ns: 0,
            max_instances: 8,
            emit_incomplete: false,
            sample: 1,
            queue: 0,
            queue_map: String::new(),
            captures_identity: false,
            emits_records: true,
        }
    }

    #[test]
    fn an_instance_names_the_links_it_filed() {
        let spec = linked_spec();
        let mut record = vec![0u8; 88];
        // Slots 0 and 2 filed.
        record[56..64].copy_from_slice(&0b101u64.to_le_bytes());
        record[64..72].copy_from_slice(&7u64.to_le_bytes());
        record[72..80].copy_from_slice(&8u64.to_le_bytes());
        record[80..88].copy_from_slice(&9u64.to_le_bytes());
        let got = filed_links(&spec, &record);
        assert_eq!(
            got,
            [
                ("l0", &7u64.to_le_bytes()[..]),
                ("l2", &9u64.to_le_bytes()[..])
            ]
        );
        // A short record names only what it holds; nothing filed, nothing named.
        assert_eq!(filed_links(&spec, &record[..72]).len(), 1);
        assert!(filed_links(&spec, &[0u8; 88]).is_empty());
    }

    #[test]
    fn a_link_names_its_instance_by_begin_key_and_start() {
        let mut value = vec![1u8; 4];
        value.extend_from_slice(&7u64.to_le_bytes());
        assert!(names_instance(&value, &[1; 4], 7));
        // An instance begun again under the same key has another start.
        assert!(!names_instance(&value, &[1; 4], 8));
        assert!(!names_instance(&value, &[2; 4], 7));
        assert!(!names_instance(&[1, 1, 1, 1], &[1; 4], 7));
    }

    fn counters(begun: u64, completed: u64, expired: u64, replaced: u64, full: u64) -> [u64; 5] {
        let mut c = [0u64; 5];
        c[StreamCounter::Begun as usize] = begun;
        c[StreamCounter::Completed as usize] = completed;
        c[StreamCounter::Expired as usize] = expired;
        c[StreamCounter::Replaced as usize] = replaced;
        c[StreamCounter::MapFull as usize] = full;
        c
    }

    #[test]
    fn instances_pushed_out_of_a_full_queue_are_not_evictions() {
        let mut c = [0u64; StreamCounter::COUNT as usize];
        c[StreamCounter::Begun as usize] = 20;
        c[StreamCounter::Completed as usize] = 15;
        c[StreamCounter::QueueOverflow as usize] = 3;
        let l = Losses::account(&c, 0, 2);
        assert_eq!((l.overflowed, l.evicted, l.open), (3, 0, 2));
        assert_eq!(
            l.report("pipe", 10240).as_deref(),
            Some("weft: stream pipe: 3 pushed out of a full queue, 2 still open at exit")
        );
    }

    #[test]
    fn evictions_are_what_is_left_unaccounted() {
        // 100 begun: 90 completed, 1 expired by a probe and 2 by the sweep,
        // 1 replaced, 4 open: 2 evicted.
        let l = Losses::account(&counters(100, 90, 1, 1, 0), 2, 4);
        assert_eq!(
            l,
            Losses {
                timed_out: 3,
                replaced: 1,
                refused: 0,
                evicted: 2,
                open: 4,
                overflowed: 0,
            }
        );
        assert_eq!(
            l.report("read_req", 10240).as_deref(),
            Some(
                "weft: stream read_req: 3 timed out, 1 replaced, 2 evicted by the map limit (max 10240), 4 still open at exit"
            )
        );
        // Refused begins were never begun, so they are not evictions.
        let l = Losses::account(&counters(5, 5, 0, 0, 5), 0, 0);
        assert_eq!((l.refused, l.evicted), (5, 0));
        assert_eq!(
            l.report("s", 8).as_deref(),
            Some("weft: stream s: 5 refused by the full state map")
        );
    }

    #[test]
    fn nothing_lost_says_nothing() {
        let l = Losses::account(&counters(7, 7, 0, 0, 0), 0, 0);
        assert_eq!(l, Losses::default());
        assert_eq!(l.report("read_req", 10240), None);
        // Counters read mid-flight can over-account; never below zero.
        let l = Losses::account(&counters(3, 5, 0, 0, 0), 1, 1);
        assert_eq!(l.evicted, 0);
        // A short counters map reads as zeros.
        assert_eq!(Losses::account(&[], 0, 0), Losses::default());
    }

    #[test]
    fn start_ns_of_short_values_is_zero() {
        assert_eq!(start_ns(&[]), 0);
        assert_eq!(start_ns(&[0; 15]), 0);
        assert_eq!(start_ns(&entry(1, 42).1[0]), 42);
    }
}
