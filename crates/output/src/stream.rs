//! Stream records: one ended (or expired) instance of a `stream`, decoded
//! from the bytes laid out as [`abi::stream`] describes. Each output format
//! renders them in its own module (`text::write_stream_text`,
//! `json::write_stream_json`, `timeline`, `metrics`).
//!
//! A [`StreamRecord`] borrows its names from the [`StreamSpec`] and its
//! `comm` from the record bytes, so decoding allocates only the stage and
//! field lists (and what the field values themselves hold).

use abi::StreamSpec;
use abi::stream::{
    STREAM_CGROUP_OFFSET, STREAM_COMM_OFFSET, STREAM_COMM_SIZE, STREAM_END_OFFSET,
    STREAM_PID_TGID_OFFSET, STREAM_START_OFFSET,
};

use crate::decode::decode;
use crate::value::Value;

/// One stage of a decoded instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageRecord<'a> {
    pub name: &'a str,
    /// When the stage was first reached (last, for a `keep last` stage); 0
    /// when it never was.
    pub ts_ns: u64,
    /// When it was last reached; 0 when it never was.
    pub last_ns: u64,
    /// Time since the instance began (`ts_ns - start_ns`); 0 for a stage
    /// never reached.
    pub offset_ns: u64,
    /// Time since the previous reached stage in written order (since
    /// `start_ns` for the first reached one): negative when this stage
    /// fired before it. The deltas of the reached stages add up to each
    /// one's offset. 0 for a stage never reached.
    pub delta_ns: i64,
    /// How many times the stage fired for this instance.
    pub hits: u64,
    /// The task that ran the stage's first hit: its process and thread
    /// (0 when never reached or not recorded) and its comm (empty when the
    /// stream does not record identity or it is the `begin` task).
    pub pid: u32,
    pub tid: u32,
    pub comm: &'a [u8],
}

impl StageRecord<'_> {
    /// Whether another task than the record's (the `begin` task) ran it.
    pub fn ran_elsewhere(&self, record: &StreamRecord<'_>) -> bool {
        self.ts_ns != 0 && self.tid != 0 && self.tid != record.tid
    }
}

/// One decoded instance of a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRecord<'a> {
    /// The stream's name.
    pub stream: &'a str,
    /// The end stage was reached (`end_ns != 0`); false for an expired,
    /// evicted or still-open instance emitted as incomplete.
    pub complete: bool,
    /// Process (tgid) and thread at begin.
    pub pid: u32,
    pub tid: u32,
    /// `comm` at begin, up to its first NUL.
    pub comm: &'a [u8],
    /// The task's cgroup (v2) id at begin; 0 when it was not recorded.
    pub cgroup: u64,
    /// That cgroup's path below the cgroup v2 mount (`/system.slice/x`),
    /// when user space found it (decoding leaves it `None`).
    pub cgroup_path: Option<String>,
    /// `bpf_ktime_get_ns()` (CLOCK_MONOTONIC) at begin.
    pub start_ns: u64,
    /// At end; 0 when incomplete.
    pub end_ns: u64,
    /// `end_ns - start_ns`; 0 when incomplete.
    pub duration_ns: u64,
    pub stages: Vec<StageRecord<'a>>,
    /// The captured `$fields` (names without `$`), in declaration order.
    pub fields: Vec<(&'a str, Value)>,
    /// `sample N`: one in N instances was begun (1 when not sampled).
    pub sample: u32,
    /// Every reached stage fired no earlier than the reached stage written
    /// before it; false when some stage fired before its predecessor.
    pub in_order: bool,
}

impl StreamRecord<'_> {
    /// The timestamp of the last stage reached (`start_ns` if none was).
    pub fn last_reached_ns(&self) -> u64 {
        self.stages
            .iter()
            .filter(|s| s.ts_ns != 0)
            .map(|s| s.ts_ns)
            .fold(self.start_ns, u64::max)
    }
}

/// Decodes one stream record (or state map value, which has the same layout).
/// Short input never panics: missing bytes read as zero.
pub fn decode_stream_record<'a>(spec: &'a StreamSpec, bytes: &'a [u8]) -> StreamRecord<'a> {
    let start_ns = word(bytes, STREAM_START_OFFSET);
    let end_ns = word(bytes, STREAM_END_OFFSET);
    let pid_tgid = word(bytes, STREAM_PID_TGID_OFFSET);
    let comm = field(bytes, STREAM_COMM_OFFSET, STREAM_COMM_SIZE);
    let comm = &comm[..comm.iter().position(|&b| b == 0).unwrap_or(comm.len())];
    let mut previous = start_ns;
    let mut in_order = true;
    let stages = spec
        .stages
        .iter()
        .map(|stage| {
            let ts_ns = word(bytes, stage.ts_offset);
            let (offset_ns, delta_ns) = if ts_ns == 0 {
                (0, 0)
            } else {
                // Two's-complement difference: times are within 2^63 ns.
                let delta = ts_ns.wrapping_sub(previous) as i64;
                in_order &= delta >= 0;
                previous = ts_ns;
                (ts_ns.saturating_sub(start_ns), delta)
            };
            let task = word(bytes, stage.task_offset);
            let c = field(bytes, stage.comm_offset, STREAM_COMM_SIZE);
            let stage_comm = &c[..c.iter().position(|&b| b == 0).unwrap_or(c.len())];
            StageRecord {
                name: &stage.name,
                ts_ns,
                last_ns: word(bytes, stage.last_offset),
                offset_ns,
                delta_ns,
                hits: word(bytes, stage.hits_offset),
                pid: (task >> 32) as u32,
                tid: task as u32,
                comm: stage_comm,
            }
        })
        .collect();
    let fields = spec
        .fields
        .iter()
        .map(|f| {
            let layout = &f.field.layout;
            let value = decode(layout, field(bytes, f.field.offset, layout.size()));
            (f.name.as_str(), value)
        })
        .collect();
    StreamRecord {
        stream: &spec.name,
        complete: end_ns != 0,
        pid: (pid_tgid >> 32) as u32,
        tid: pid_tgid as u32,
        comm,
        cgroup: word(bytes, STREAM_CGROUP_OFFSET),
        cgroup_path: None,
        start_ns,
        end_ns,
        duration_ns: if end_ns != 0 {
            end_ns.saturating_sub(start_ns)
        } else {
            0
        },
        stages,
        fields,
        sample: spec.sample,
        in_order,
    }
}

/// The bytes of `bytes[offset..offset + len]` that exist.
fn field(bytes: &[u8], offset: u32, len: u32) -> &[u8] {
    let start = (offset as usize).min(bytes.len());
    let end = (offset as usize)
        .saturating_add(len as usize)
        .min(bytes.len());
    &bytes[start..end]
}

/// A little-endian `u64` at `offset`; missing bytes are zero.
fn word(bytes: &[u8], offset: u32) -> u64 {
    let src = field(bytes, offset, 8);
    let mut buf = [0u8; 8];
    buf[..src.len()].copy_from_slice(src);
    u64::from_le_bytes(buf)
}

/// A duration for people: `812ns`, `15.234us`, `2.001ms`, `1.500s`
/// (three decimals, truncated, so the text is exact and stable).
pub fn duration_text(ns: u64) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = crate::text::write_duration(&mut out, ns);
    String::from_utf8_lossy(&out).into_owned()
}
