//! Stream records: one ended (or expired) instance of a `stream`, decoded
//! from the bytes laid out as [`abi::stream`] describes, and its text and
//! JSON renderings.
//!
//! A [`StreamRecord`] borrows its names from the [`StreamSpec`] and its
//! `comm` from the record bytes, so decoding allocates only the stage and
//! field lists (and what the field values themselves hold).

use std::io::{self, Write};

use abi::StreamSpec;
use abi::stream::{
    STREAM_CGROUP_OFFSET, STREAM_COMM_OFFSET, STREAM_COMM_SIZE, STREAM_END_OFFSET,
    STREAM_PID_TGID_OFFSET, STREAM_START_OFFSET,
};

use crate::decode::decode;
use crate::json::{escape, value_json};
use crate::text::value_text;
use crate::value::Value;

/// One stage of a decoded instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageRecord<'a> {
    pub name: &'a str,
    /// When the stage was (last) reached; 0 when it never was.
    pub ts_ns: u64,
    /// Time since the previous reached stage (since `start_ns` for the first
    /// reached one); 0 for a stage never reached.
    pub delta_ns: u64,
    /// How many times the stage fired for this instance.
    pub hits: u64,
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
    pub cgroup: u64,
    /// `bpf_ktime_get_ns()` (CLOCK_MONOTONIC) at begin.
    pub start_ns: u64,
    /// At end; 0 when incomplete.
    pub end_ns: u64,
    /// `end_ns - start_ns`; 0 when incomplete.
    pub duration_ns: u64,
    pub stages: Vec<StageRecord<'a>>,
    /// The captured `$fields` (names without `$`), in declaration order.
    pub fields: Vec<(&'a str, Value)>,
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
    let stages = spec
        .stages
        .iter()
        .map(|stage| {
            let ts_ns = word(bytes, stage.ts_offset);
            let delta_ns = if ts_ns == 0 {
                0
            } else {
                let delta = ts_ns.saturating_sub(previous);
                previous = ts_ns;
                delta
            };
            StageRecord {
                name: &stage.name,
                ts_ns,
                delta_ns,
                hits: word(bytes, stage.hits_offset),
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
        start_ns,
        end_ns,
        duration_ns: if end_ns != 0 {
            end_ns.saturating_sub(start_ns)
        } else {
            0
        },
        stages,
        fields,
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
    let _ = write_duration(&mut out, ns);
    String::from_utf8_lossy(&out).into_owned()
}

fn write_duration(out: &mut dyn Write, ns: u64) -> io::Result<()> {
    let (unit, name) = match ns {
        0..1_000 => return write!(out, "{ns}ns"),
        1_000..1_000_000 => (1_000, "us"),
        1_000_000..1_000_000_000 => (1_000_000, "ms"),
        _ => (1_000_000_000, "s"),
    };
    let millis_of_unit = (ns % unit) / (unit / 1_000);
    write!(out, "{}.{millis_of_unit:03}{name}", ns / unit)
}

/// Writes `text` as a logfmt value: as-is, or in double quotes (with `"` and
/// `\` escaped) when it is empty or holds a space, `=`, `"` or a control byte.
fn write_logfmt(out: &mut dyn Write, text: &[u8]) -> io::Result<()> {
    let plain = !text.is_empty()
        && !text
            .iter()
            .any(|&b| b <= b' ' || b == b'=' || b == b'"' || b == 0x7f);
    if plain {
        return out.write_all(text);
    }
    out.write_all(b"\"")?;
    for &b in text {
        match b {
            b'"' => out.write_all(b"\\\"")?,
            b'\\' => out.write_all(b"\\\\")?,
            b'\n' => out.write_all(b"\\n")?,
            b'\t' => out.write_all(b"\\t")?,
            0..=0x1f | 0x7f => write!(out, "\\x{b:02x}")?,
            _ => out.write_all(&[b])?,
        }
    }
    out.write_all(b"\"")
}

/// Writes one record as one line of text (the `-f text` format):
///
/// ```text
/// read_req pid=1234 tid=1234 comm=weftwl start=5012.345678901 dur=15.234us [sys_enter_read +0 > sys_exit_read +15.234us] fd=3 bytes=4096
/// ```
///
/// - the stream name, then `pid=`, `tid=`, `comm=` at begin;
/// - `start=` is `start_ns` (CLOCK_MONOTONIC) as seconds with 9 decimals;
/// - `dur=` the total duration (see [`duration_text`]), or the word
///   `incomplete` for an instance that never reached its end stage;
/// - in brackets, the stages in order separated by ` > `, each with the time
///   since the previous reached stage (`+0` for the first), `-` if it was
///   never reached, and `xN` after it when it fired N > 1 times;
/// - then every captured field as `name=value`, values printed as `print()`
///   prints them.
///
/// `comm` and field values are quoted (`comm="a b"`) when empty or when they
/// hold a space, `=`, `"` or a control byte, so every line splits on spaces
/// into the same tokens.
pub fn write_stream_text(out: &mut dyn Write, record: &StreamRecord<'_>) -> io::Result<()> {
    write!(
        out,
        "{} pid={} tid={} comm=",
        record.stream, record.pid, record.tid
    )?;
    write_logfmt(out, record.comm)?;
    write!(
        out,
        " start={}.{:09} ",
        record.start_ns / 1_000_000_000,
        record.start_ns % 1_000_000_000
    )?;
    if record.complete {
        out.write_all(b"dur=")?;
        write_duration(out, record.duration_ns)?;
    } else {
        out.write_all(b"incomplete")?;
    }
    out.write_all(b" [")?;
    let mut first_reached = true;
    for (index, stage) in record.stages.iter().enumerate() {
        if index > 0 {
            out.write_all(b" > ")?;
        }
        out.write_all(stage.name.as_bytes())?;
        if stage.ts_ns == 0 {
            out.write_all(b" -")?;
        } else if first_reached && stage.delta_ns == 0 {
            out.write_all(b" +0")?;
        } else {
            out.write_all(b" +")?;
            write_duration(out, stage.delta_ns)?;
        }
        if stage.ts_ns != 0 {
            first_reached = false;
        }
        if stage.hits > 1 {
            write!(out, " x{}", stage.hits)?;
        }
    }
    out.write_all(b"]")?;
    for (name, value) in &record.fields {
        write!(out, " {name}=")?;
        match value {
            Value::Int(v) => write!(out, "{v}")?,
            Value::UInt(v) => write!(out, "{v}")?,
            other => write_logfmt(out, &value_text(other))?,
        }
    }
    out.write_all(b"\n")
}

/// Writes one record as one JSON line (the `-f json` format), in bpftrace's
/// envelope style and with its string escaping:
///
/// ```text
/// {"type": "stream", "data": {"stream": "read_req", "complete": true, "pid": 1234, "tid": 1234, "comm": "weftwl", "cgroup": 1, "start_ns": 5012345678901, "end_ns": 5012345694135, "duration_ns": 15234, "stages": [{"name": "sys_enter_read", "ts_ns": 5012345678901, "delta_ns": 0, "hits": 1}, {"name": "sys_exit_read", "ts_ns": 5012345694135, "delta_ns": 15234, "hits": 1}], "fields": {"fd": 3, "bytes": 4096}}}
/// ```
///
/// `end_ns` and `duration_ns` are 0 for an incomplete record, and `ts_ns`
/// and `delta_ns` are 0 for a stage never reached. Field values are written
/// as `print()` writes them in JSON (`null` for a value without one).
pub fn write_stream_json(out: &mut dyn Write, record: &StreamRecord<'_>) -> io::Result<()> {
    out.write_all(b"{\"type\": \"stream\", \"data\": {\"stream\": \"")?;
    out.write_all(&escape(record.stream.as_bytes()))?;
    write!(
        out,
        "\", \"complete\": {}, \"pid\": {}, \"tid\": {}, \"comm\": \"",
        record.complete, record.pid, record.tid
    )?;
    out.write_all(&escape(record.comm))?;
    write!(
        out,
        "\", \"cgroup\": {}, \"start_ns\": {}, \"end_ns\": {}, \"duration_ns\": {}, \"stages\": [",
        record.cgroup, record.start_ns, record.end_ns, record.duration_ns
    )?;
    for (index, stage) in record.stages.iter().enumerate() {
        if index > 0 {
            out.write_all(b", ")?;
        }
        out.write_all(b"{\"name\": \"")?;
        out.write_all(&escape(stage.name.as_bytes()))?;
        write!(
            out,
            "\", \"ts_ns\": {}, \"delta_ns\": {}, \"hits\": {}}}",
            stage.ts_ns, stage.delta_ns, stage.hits
        )?;
    }
    out.write_all(b"], \"fields\": {")?;
    for (index, (name, value)) in record.fields.iter().enumerate() {
        if index > 0 {
            out.write_all(b", ")?;
        }
        out.write_all(b"\"")?;
        out.write_all(&escape(name.as_bytes()))?;
        out.write_all(b"\": ")?;
        match value {
            Value::Int(v) => write!(out, "{v}")?,
            Value::UInt(v) => write!(out, "{v}")?,
            Value::None => out.write_all(b"null")?,
            other => out.write_all(&value_json(other, 1))?,
        }
    }
    out.write_all(b"}}}\n")
}
