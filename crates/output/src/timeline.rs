//! `--timeline FILE`: stream records as a Chrome trace-event JSON file, which
//! Perfetto (ui.perfetto.dev) and chrome://tracing open.
//!
//! Each instance is a complete event (`"ph": "X"`) named after its stream on
//! its thread's track, with the interval between each two consecutive
//! reached stages as a slice nested in it (`sys_enter_read → sys_exit_read`).
//! Metadata events name processes and threads after their `comm`. Times are
//! microseconds with nanosecond decimals, on CLOCK_MONOTONIC like
//! `bpf_ktime_get_ns()`.
//!
//! The writer keeps records in a compact form (names interned once per
//! stream, timestamps and field values only) and writes the file at the end;
//! past [`TimelineWriter::max_records`] it counts what it leaves out.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::stream::StreamRecord;
use crate::text::value_text;
use crate::value::Value;

/// How many records a writer keeps by default (about 100 bytes each plus
/// their field values).
pub const DEFAULT_MAX_RECORDS: usize = 1_000_000;

/// Thread ids from here up are made up for instances that overlap another
/// instance on the same thread without nesting in it (a trace-event track
/// only shows nested slices); real thread ids stay below `PID_MAX_LIMIT`.
const LANE_TID_BASE: u32 = 1 << 22;

/// The names of one stream, kept once.
#[derive(Debug)]
struct StreamNames {
    name: String,
    stages: Vec<String>,
    fields: Vec<String>,
}

/// One instance in compact form.
#[derive(Debug)]
struct Slice {
    stream: usize,
    complete: bool,
    pid: u32,
    tid: u32,
    start_ns: u64,
    /// `end_ns`, or the last reached stage for an incomplete instance.
    end_ns: u64,
    /// `(ts_ns, last_ns, hits)` per stage; `ts_ns == 0` for a stage never reached.
    stages: Box<[(u64, u64, u64)]>,
    /// Per stage, the `(pid, tid)` of the task that ran it when it is not
    /// the `begin` task (`None`: that task, or not recorded).
    tasks: Box<[Option<(u32, u32)>]>,
    fields: Box<[Value]>,
    /// The task's cgroup path at begin, when known.
    cgroup: Option<Box<str>>,
    /// `sample N` (1: not sampled).
    sample: u32,
    /// No stage fired before the reached stage written before it.
    in_order: bool,
}

/// Collects stream records and writes them as a trace-event file.
#[derive(Debug)]
pub struct TimelineWriter {
    streams: Vec<StreamNames>,
    /// `comm` of every `(pid, tid)` seen, for the metadata events.
    threads: BTreeMap<(u32, u32), Box<[u8]>>,
    slices: Vec<Slice>,
    max_records: usize,
    dropped: u64,
}

impl Default for TimelineWriter {
    fn default() -> Self {
        TimelineWriter::new()
    }
}

impl TimelineWriter {
    /// A writer keeping up to [`DEFAULT_MAX_RECORDS`] records.
    pub fn new() -> TimelineWriter {
        TimelineWriter::with_max_records(DEFAULT_MAX_RECORDS)
    }

    /// A writer keeping up to `max_records` records; later ones are counted
    /// in [`TimelineWriter::dropped`].
    pub fn with_max_records(max_records: usize) -> TimelineWriter {
        TimelineWriter {
            streams: Vec::new(),
            threads: BTreeMap::new(),
            slices: Vec::new(),
            max_records,
            dropped: 0,
        }
    }

    pub fn max_records(&self) -> usize {
        self.max_records
    }

    /// Records kept so far.
    pub fn len(&self) -> usize {
        self.slices.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slices.is_empty()
    }

    /// Records left out because [`TimelineWriter::max_records`] were kept.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Keeps one record for the file.
    pub fn push(&mut self, record: &StreamRecord<'_>) {
        if self.slices.len() >= self.max_records {
            self.dropped += 1;
            return;
        }
        let stream = self.intern(record);
        self.threads
            .entry((record.pid, record.tid))
            .or_insert_with(|| record.comm.into());
        for stage in record.stages.iter().filter(|s| s.ran_elsewhere(record)) {
            self.threads
                .entry((stage.pid, stage.tid))
                .or_insert_with(|| stage.comm.into());
        }
        let end_ns = if record.complete {
            record.end_ns
        } else {
            record.last_reached_ns()
        };
        self.slices.push(Slice {
            stream,
            complete: record.complete,
            pid: record.pid,
            tid: record.tid,
            start_ns: record.start_ns,
            end_ns: end_ns.max(record.start_ns),
            stages: record
                .stages
                .iter()
                .map(|s| (s.ts_ns, s.last_ns, s.hits))
                .collect(),
            tasks: record
                .stages
                .iter()
                .map(|s| s.ran_elsewhere(record).then_some((s.pid, s.tid)))
                .collect(),
            fields: record.fields.iter().map(|(_, v)| v.clone()).collect(),
            cgroup: record.cgroup_path.as_deref().map(Box::from),
            sample: record.sample,
            in_order: record.in_order,
        });
    }

    /// The index of the record's stream names, added on first sight.
    fn intern(&mut self, record: &StreamRecord<'_>) -> usize {
        let same = |names: &StreamNames| {
            names.name == record.stream
                && names.stages.len() == record.stages.len()
                && names.fields.len() == record.fields.len()
                && names
                    .stages
                    .iter()
                    .zip(&record.stages)
                    .all(|(a, b)| a == b.name)
                && names
                    .fields
                    .iter()
                    .zip(&record.fields)
                    .all(|(a, (b, _))| a == b)
        };
        if let Some(index) = self.streams.iter().position(same) {
            return index;
        }
        self.streams.push(StreamNames {
            name: record.stream.to_string(),
            stages: record.stages.iter().map(|s| s.name.to_string()).collect(),
            fields: record.fields.iter().map(|(n, _)| n.to_string()).collect(),
        });
        self.streams.len() - 1
    }

    /// Writes the whole file:
    ///
    /// ```text
    /// {"traceEvents": [
    /// {"ph": "M", "name": "process_name", "pid": 7, "tid": 7, "args": {"name": "weftwl"}},
    /// {"ph": "M", "name": "thread_name", "pid": 7, "tid": 8, "args": {"name": "weftwl"}},
    /// {"ph": "X", "name": "read_req", "cat": "stream", "ts": 1000.000, "dur": 15.234, "pid": 7, "tid": 8, "args": {"fd": 3}},
    /// {"ph": "X", "name": "sys_enter_read → sys_exit_read", "cat": "stage", "ts": 1000.000, "dur": 15.234, "pid": 7, "tid": 8, "args": {"hits": 1}},
    /// ```
    ///
    /// A stage slice's `hits` are its later stage's; when that stage fired
    /// more than once, `last_hit_us` is the time from its first hit to its
    /// last. The file ends:
    ///
    /// ```text
    /// ],
    /// "displayTimeUnit": "ns"}
    /// ```
    ///
    /// (without the trailing comma). Instances are written per thread in
    /// start order. An incomplete instance spans from its start to its last
    /// reached stage, has category `stream,incomplete` and the argument
    /// `"incomplete": true`. An instance that overlaps an earlier one on the
    /// same thread without nesting in it goes to a thread of its own, named
    /// `comm tid (overlap N)`, since a track only shows nested slices.
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        let lanes = self.lanes();
        // Ids of the flow arrows from a stage to the next one run elsewhere.
        let mut flows = 0u64;
        out.write_all(b"{\"traceEvents\": [")?;
        let mut first = true;
        let mut event = |out: &mut dyn Write| -> io::Result<()> {
            out.write_all(if first { b"\n" } else { b",\n" })?;
            first = false;
            Ok(())
        };
        // Processes: named after the comm of their main thread, else of the
        // first thread seen.
        let mut processes: BTreeMap<u32, &[u8]> = BTreeMap::new();
        for (&(pid, tid), comm) in &self.threads {
            let name = processes.entry(pid).or_insert(comm);
            if tid == pid {
                *name = comm;
            }
        }
        for (&pid, comm) in &processes {
            event(out)?;
            write!(
                out,
                "{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {pid}, \"tid\": {pid}, \"args\": {{\"name\": "
            )?;
            json_string(out, comm)?;
            out.write_all(b"}}")?;
        }
        for (&(pid, tid), comm) in &self.threads {
            event(out)?;
            write!(
                out,
                "{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {pid}, \"tid\": {tid}, \"args\": {{\"name\": "
            )?;
            json_string(out, comm)?;
            out.write_all(b"}}")?;
        }
        for lane in &lanes.extra {
            let comm = self
                .threads
                .get(&(lane.pid, lane.tid))
                .map_or(&[][..], |c| &c[..]);
            let mut name = comm.to_vec();
            write!(name, " {} (overlap {})", lane.tid, lane.number)?;
            event(out)?;
            write!(
                out,
                "{{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": {}, \"tid\": {}, \"args\": {{\"name\": ",
                lane.pid, lane.lane_tid
            )?;
            json_string(out, &name)?;
            out.write_all(b"}}")?;
        }
        for &(index, tid) in &lanes.order {
            let slice = &self.slices[index];
            let names = &self.streams[slice.stream];
            event(out)?;
            out.write_all(b"{\"ph\": \"X\", \"name\": ")?;
            json_string(out, names.name.as_bytes())?;
            out.write_all(if slice.complete {
                b", \"cat\": \"stream\", \"ts\": "
            } else {
                b", \"cat\": \"stream,incomplete\", \"ts\": "
            })?;
            write_us(out, slice.start_ns)?;
            out.write_all(b", \"dur\": ")?;
            write_us(out, slice.end_ns - slice.start_ns)?;
            write!(
                out,
                ", \"pid\": {}, \"tid\": {tid}, \"args\": {{",
                slice.pid
            )?;
            let mut first_arg = true;
            if !slice.complete && !names.fields.iter().any(|f| f == "incomplete") {
                out.write_all(b"\"incomplete\": true")?;
                first_arg = false;
            }
            if let Some(cgroup) = slice
                .cgroup
                .as_deref()
                .filter(|_| !names.fields.iter().any(|f| f == "cgroup"))
            {
                if !first_arg {
                    out.write_all(b", ")?;
                }
                first_arg = false;
                out.write_all(b"\"cgroup\": ")?;
                json_string(out, cgroup.as_bytes())?;
            }
            if !slice.in_order && !names.fields.iter().any(|f| f == "out_of_order") {
                if !first_arg {
                    out.write_all(b", ")?;
                }
                first_arg = false;
                out.write_all(b"\"out_of_order\": true")?;
            }
            if slice.sample > 1 && !names.fields.iter().any(|f| f == "sample") {
                if !first_arg {
                    out.write_all(b", ")?;
                }
                first_arg = false;
                write!(out, "\"sample\": {}", slice.sample)?;
            }
            for (name, value) in names.fields.iter().zip(&slice.fields) {
                if !first_arg {
                    out.write_all(b", ")?;
                }
                first_arg = false;
                json_string(out, name.as_bytes())?;
                out.write_all(b": ")?;
                json_value(out, value)?;
            }
            out.write_all(b"}}")?;
            // One nested slice per interval between consecutive reached
            // stages in the order they fired (a stage that fired before the
            // one written above it comes first), so each stage is drawn at
            // its offset from the instance's start, as text and JSON say.
            let mut fired: Vec<(u64, usize)> = slice
                .stages
                .iter()
                .enumerate()
                .filter(|(_, s)| s.0 != 0)
                .map(|(i, s)| (s.0.clamp(slice.start_ns, slice.end_ns), i))
                .collect();
            fired.sort_unstable();
            for pair in fired.windows(2) {
                let ((from_ns, from), (ts_ns, stage)) = (pair[0], pair[1]);
                let (_, last_ns, hits) = slice.stages[stage];
                // Each interval is drawn on the thread that ran its later
                // stage; an arrow leads there from the earlier one's.
                let at = |i: usize| slice.tasks[i].unwrap_or((slice.pid, tid));
                let ((from_pid, from_tid), (pid, stage_tid)) = (at(from), at(stage));
                if (from_pid, from_tid) != (pid, stage_tid) {
                    flows += 1;
                    event(out)?;
                    write!(
                        out,
                        "{{\"ph\": \"s\", \"id\": {flows}, \"name\": \"stage\", \"cat\": \"flow\", \"ts\": "
                    )?;
                    write_us(out, from_ns)?;
                    write!(out, ", \"pid\": {from_pid}, \"tid\": {from_tid}}}")?;
                    event(out)?;
                    write!(
                        out,
                        "{{\"ph\": \"f\", \"bp\": \"e\", \"id\": {flows}, \"name\": \"stage\", \"cat\": \"flow\", \"ts\": "
                    )?;
                    write_us(out, from_ns)?;
                    write!(out, ", \"pid\": {pid}, \"tid\": {stage_tid}}}")?;
                }
                event(out)?;
                out.write_all(b"{\"ph\": \"X\", \"name\": ")?;
                let mut name = names.stages[from].clone().into_bytes();
                name.extend_from_slice(" → ".as_bytes());
                name.extend_from_slice(names.stages[stage].as_bytes());
                json_string(out, &name)?;
                out.write_all(b", \"cat\": \"stage\", \"ts\": ")?;
                write_us(out, from_ns)?;
                out.write_all(b", \"dur\": ")?;
                write_us(out, ts_ns - from_ns)?;
                write!(
                    out,
                    ", \"pid\": {pid}, \"tid\": {stage_tid}, \"args\": {{\"hits\": {hits}"
                )?;
                if hits > 1 && last_ns > ts_ns {
                    // From the stage's first hit to its last, in microseconds.
                    out.write_all(b", \"last_hit_us\": ")?;
                    write_us(out, last_ns - ts_ns)?;
                }
                out.write_all(b"}}")?;
            }
        }
        out.write_all(b"\n],\n\"displayTimeUnit\": \"ns\"}\n")
    }

    /// Puts every slice on a lane: its own thread when it does not overlap
    /// the previous slice there, else the first made-up thread free at its
    /// start.
    fn lanes(&self) -> Lanes {
        let mut order: Vec<usize> = (0..self.slices.len()).collect();
        order.sort_by_key(|&i| {
            let s = &self.slices[i];
            (s.pid, s.tid, s.start_ns, std::cmp::Reverse(s.end_ns), i)
        });
        let mut out = Lanes {
            order: Vec::with_capacity(order.len()),
            extra: Vec::new(),
        };
        // End of the last slice on each lane of the current thread.
        let mut ends: Vec<u64> = Vec::new();
        let mut lane_tids: Vec<u32> = Vec::new();
        let mut current = None;
        for index in order {
            let s = &self.slices[index];
            if current != Some((s.pid, s.tid)) {
                current = Some((s.pid, s.tid));
                ends.clear();
                lane_tids.clear();
                lane_tids.push(s.tid);
            }
            let lane = match ends.iter().position(|&end| end <= s.start_ns) {
                Some(lane) => lane,
                None => {
                    ends.push(0);
                    if ends.len() > lane_tids.len() {
                        let lane_tid = LANE_TID_BASE + out.extra.len() as u32;
                        out.extra.push(Lane {
                            pid: s.pid,
                            tid: s.tid,
                            number: lane_tids.len(),
                            lane_tid,
                        });
                        lane_tids.push(lane_tid);
                    }
                    ends.len() - 1
                }
            };
            ends[lane] = s.end_ns;
            out.order.push((index, lane_tids[lane]));
        }
        out
    }
}

/// Where each slice goes: `(slice index, tid to show it on)` in write order,
/// and the made-up threads.
struct Lanes {
    order: Vec<(usize, u32)>,
    extra: Vec<Lane>,
}

struct Lane {
    pid: u32,
    tid: u32,
    /// 1 for the first overlap lane of a thread.
    number: usize,
    lane_tid: u32,
}

/// Nanoseconds as microseconds with three decimals (`1234567` → `1234.567`).
fn write_us(out: &mut dyn Write, ns: u64) -> io::Result<()> {
    write!(out, "{}.{:03}", ns / 1000, ns % 1000)
}

/// A JSON string (RFC 8259): invalid UTF-8 is replaced, control characters
/// are escaped.
fn json_string(out: &mut dyn Write, bytes: &[u8]) -> io::Result<()> {
    out.write_all(b"\"")?;
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '"' => out.write_all(b"\\\"")?,
            '\\' => out.write_all(b"\\\\")?,
            '\n' => out.write_all(b"\\n")?,
            '\t' => out.write_all(b"\\t")?,
            '\r' => out.write_all(b"\\r")?,
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32)?,
            c => {
                let mut buf = [0u8; 4];
                out.write_all(c.encode_utf8(&mut buf).as_bytes())?;
            }
        }
    }
    out.write_all(b"\"")
}

/// A value as JSON: numbers, booleans, strings, tuples and arrays as arrays,
/// records as objects; pointers,
/// `buf()` bytes, stacks and symbols as the strings `print()` shows.
fn json_value(out: &mut dyn Write, value: &Value) -> io::Result<()> {
    match value {
        Value::Int(v) => write!(out, "{v}"),
        Value::UInt(v) | Value::Enum { value: v, .. } => write!(out, "{v}"),
        Value::Bool(b) => write!(out, "{b}"),
        Value::Pointer(v) => write!(out, "\"0x{v:x}\""),
        Value::Str(bytes) => json_string(out, bytes),
        Value::Bytes(_)
        | Value::Stack(_)
        | Value::Sym(_)
        | Value::CgroupPath(_)
        | Value::Timestamp(_)
        | Value::User(_) => json_string(out, &value_text(value)),
        Value::Tuple(items) | Value::Array(items) => {
            out.write_all(b"[")?;
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.write_all(b", ")?;
                }
                json_value(out, item)?;
            }
            out.write_all(b"]")
        }
        Value::Record(fields) => {
            out.write_all(b"{")?;
            for (index, (name, field)) in fields.iter().enumerate() {
                if index > 0 {
                    out.write_all(b", ")?;
                }
                json_string(out, name.as_bytes())?;
                out.write_all(b": ")?;
                json_value(out, field)?;
            }
            out.write_all(b"}")
        }
        Value::None => out.write_all(b"null"),
    }
}
