//! `-f json`: one JSON object per line, byte for byte like bpftrace 0.17's
//! `JsonOutput` (spacing, key joining and its string escaping included).

use std::io::{self, Write};

use crate::flat::{EntrySource, FlatMap, shown_range};
use crate::hist::{hist_range, lhist_range};
use crate::sink::Sink;
use crate::stream::StreamRecord;
use crate::text::{key_text, step_start};
use crate::value::{Integer, MapDump, MapEntryValue, Value, average};

/// Writes bpftrace's JSON lines.
pub struct JsonSink<W: Write> {
    out: W,
}

impl<W: Write> JsonSink<W> {
    pub fn new(out: W) -> Self {
        JsonSink { out }
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn message(&mut self, kind: &str, text: &[u8]) -> io::Result<()> {
        write!(self.out, "{{\"type\": \"{kind}\", \"data\": \"")?;
        self.out.write_all(&escape(text))?;
        self.out.write_all(b"\"}\n")
    }
}

impl<W: Write> Sink for JsonSink<W> {
    fn attached_probes(&mut self, count: u64) -> io::Result<()> {
        writeln!(
            self.out,
            "{{\"type\": \"attached_probes\", \"data\": {{\"probes\": {count}}}}}"
        )
    }

    fn lost_events(&mut self, count: u64) -> io::Result<()> {
        writeln!(
            self.out,
            "{{\"type\": \"lost_events\", \"data\": {{\"events\": {count}}}}}"
        )
    }

    fn printf(&mut self, text: &[u8]) -> io::Result<()> {
        self.message("printf", text)
    }

    fn cat(&mut self, text: &[u8]) -> io::Result<()> {
        self.message("cat", text)
    }

    fn system(&mut self, output: &[u8]) -> io::Result<()> {
        self.message("syscall", output)
    }

    fn time(&mut self, text: &[u8]) -> io::Result<()> {
        self.message("time", text)
    }

    fn join(&mut self, text: &[u8]) -> io::Result<()> {
        self.message("join", text)
    }

    fn value(&mut self, value: &Value) -> io::Result<()> {
        self.out.write_all(b"{\"type\": \"value\", \"data\": ")?;
        self.out.write_all(&value_json(value, 1))?;
        self.out.write_all(b"}\n")
    }

    fn map(&mut self, map: &MapDump, top: u64, div: u64) -> io::Result<()> {
        write_map_json(&mut self.out, &mut &*map, top, div)
    }

    fn flat_map(&mut self, map: &mut FlatMap<'_>, top: u64, div: u64) -> io::Result<()> {
        write_map_json(&mut self.out, map, top, div)
    }

    fn run_stats(&mut self, stats: &crate::stats::RunStats) -> io::Result<()> {
        crate::stats::write_stats_json(&mut self.out, stats)
    }

    fn carries_stats(&self) -> bool {
        true
    }

    fn stream_record(&mut self, record: &StreamRecord<'_>) -> io::Result<()> {
        write_stream_json(&mut self.out, record)
    }

    fn exit_separator(&mut self) -> io::Result<()> {
        // bpftrace writes these to stdout even in JSON mode.
        self.out.write_all(b"\n\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// One map as a JSON line; nothing at all for an empty map.
pub fn map_json(map: &MapDump, top: u64, div: u64) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_map_json(&mut out, &mut &*map, top, div);
    out
}

/// [`map_json`], written entry by entry.
fn write_map_json<W: Write + ?Sized>(
    out: &mut W,
    map: &mut dyn EntrySource,
    top: u64,
    div: u64,
) -> io::Result<()> {
    let div = div.max(1);
    let len = map.len();
    if len == 0 {
        return Ok(());
    }
    let kind = map.kind();
    let keyed = map.keyed();
    let label = if kind.is_hist() {
        "hist"
    } else if kind.is_stats() {
        "stats"
    } else {
        "map"
    };
    let mut text = format!("{{\"type\": \"{label}\", \"data\": {{\"").into_bytes();
    text.extend_from_slice(&escape(map.name().as_bytes()));
    text.extend_from_slice(b"\": ");
    if keyed {
        text.push(b'{');
    }
    out.write_all(&text)?;
    for (index, at) in shown_range(len, kind, top).enumerate() {
        let entry = map.entry(at);
        text.clear();
        if index > 0 {
            text.extend_from_slice(b", ");
        }
        if !entry.key.is_empty() {
            let joined: Vec<Vec<u8>> = entry.key.iter().map(key_text).collect();
            text.push(b'"');
            text.extend_from_slice(&escape(&joined.join(&b","[..])));
            text.extend_from_slice(b"\": ");
        }
        entry_value_json(&entry.value, div, &mut text);
        out.write_all(&text)?;
    }
    if keyed {
        out.write_all(b"}")?;
    }
    out.write_all(b"}}\n")
}

fn entry_value_json(value: &MapEntryValue, div: u64, out: &mut Vec<u8>) {
    let text = match value {
        MapEntryValue::Plain(v) => {
            out.extend_from_slice(&value_json(v, div));
            return;
        }
        MapEntryValue::Count(n) => (n / div).to_string(),
        MapEntryValue::Sum(n) | MapEntryValue::Min(n) | MapEntryValue::Max(n) => {
            n.divided(div).to_string()
        }
        MapEntryValue::Avg { count, total } => Integer::Signed(average(*count, *total))
            .divided(div)
            .to_string(),
        MapEntryValue::Stats { count, total } => format!(
            "{{\"count\": {}, \"average\": {}, \"total\": {}}}",
            *count as i64,
            average(*count, *total),
            total
        ),
        MapEntryValue::Hist(buckets) => hist_json(buckets, div),
        MapEntryValue::Lhist {
            min,
            max,
            step,
            buckets,
        } => lhist_json(buckets, *min, *max, *step),
    };
    out.extend_from_slice(text.as_bytes());
}

/// A value in JSON: strings quoted, tuples as arrays without spaces.
pub fn value_json(value: &Value, div: u64) -> Vec<u8> {
    let div = div.max(1);
    match value {
        Value::Int(v) => Integer::Signed(*v).divided(div).to_string().into_bytes(),
        Value::UInt(v) => (v / div).to_string().into_bytes(),
        Value::Pointer(v) => Integer::Signed(*v as i64)
            .divided(div)
            .to_string()
            .into_bytes(),
        Value::Bool(b) => b.to_string().into_bytes(),
        Value::Str(_)
        | Value::Bytes(_)
        | Value::Stack(_)
        | Value::Sym(_)
        | Value::CgroupPath(_) => {
            let mut out = vec![b'"'];
            out.extend_from_slice(&escape(&crate::text::value_text(value)));
            out.push(b'"');
            out
        }
        Value::Tuple(fields) => {
            let mut out = vec![b'['];
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&value_json(field, div));
            }
            out.push(b']');
            out
        }
        Value::None => Vec::new(),
    }
}

/// bpftrace's `json_escape`. It tests `c <= '\x1f'` on a signed `char`, so
/// every byte >= 0x80 is also escaped, as the sign-extended `int` in hex
/// (`é` becomes `\uffffffc3\uffffffa9`).
pub fn escape(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for &b in text {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..=0x1f | 0x80..=0xff => {
                let widened = i32::from(b as i8) as u32;
                out.extend_from_slice(format!("\\u{widened:04x}").as_bytes());
            }
            _ => out.push(b),
        }
    }
    out
}

fn hist_json(buckets: &[u64], div: u64) -> String {
    let Some(range) = hist_range(buckets) else {
        return "[]".to_string();
    };
    let mut items = Vec::new();
    let shown = buckets
        .iter()
        .enumerate()
        .take(range.last + 1)
        .skip(range.first);
    for (index, &count) in shown {
        let bounds = match index {
            0 => "\"max\": -1, ".to_string(),
            1 => "\"min\": 0, \"max\": 0, ".to_string(),
            2 => "\"min\": 1, \"max\": 1, ".to_string(),
            _ => {
                // bpftrace computes `1 << n` in a 32-bit `int`; from 2^31 on the
                // bounds wrap as on x86 (shift count taken mod 32).
                let power = (index - 2) as u32;
                let low = 1i32.wrapping_shl(power);
                let high = 1i32.wrapping_shl(power + 1).wrapping_sub(1);
                format!("\"min\": {low}, \"max\": {high}, ")
            }
        };
        items.push(format!("{{{bounds}\"count\": {}}}", count / div));
    }
    format!("[{}]", items.join(", "))
}

fn lhist_json(buckets: &[u64], min: i64, max: i64, step: i64) -> String {
    let Some(range) = lhist_range(buckets, min, max, step) else {
        return "[]".to_string();
    };
    let mut items = Vec::new();
    let shown = buckets
        .iter()
        .enumerate()
        .take(range.last + 1)
        .skip(range.first);
    for (index, &count) in shown {
        let i = index as i64;
        let bounds = if index == 0 {
            format!("\"max\": {}, ", min.wrapping_sub(1))
        } else if i == range.steps.saturating_add(1) {
            format!("\"min\": {max}, ")
        } else {
            format!(
                "\"min\": {}, \"max\": {}, ",
                step_start(i - 1, step, min),
                step_start(i, step, min).wrapping_sub(1)
            )
        };
        items.push(format!("{{{bounds}\"count\": {}}}", count));
    }
    format!("[{}]", items.join(", "))
}

/// Writes one record as one JSON line (the `-f json` format), in bpftrace's
/// envelope style and with its string escaping:
///
/// ```text
/// {"type": "stream", "data": {"stream": "read_req", "complete": true, "pid": 1234, "tid": 1234, "comm": "weftwl", "cgroup": 1, "start_ns": 5012345678901, "end_ns": 5012345694135, "duration_ns": 15234, "stages": [{"name": "sys_enter_read", "ts_ns": 5012345678901, "last_ns": 5012345678901, "delta_ns": 0, "hits": 1}, {"name": "sys_exit_read", "ts_ns": 5012345694135, "last_ns": 5012345694135, "delta_ns": 15234, "hits": 1}], "fields": {"fd": 3, "bytes": 4096}}}
/// ```
///
/// `end_ns` and `duration_ns` are 0 for an incomplete record; a stage's
/// `ts_ns` is its first hit (its last with `keep last`), `last_ns` its last,
/// and both with `delta_ns` are 0 for a stage never reached. Field values are written
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
            "\", \"ts_ns\": {}, \"last_ns\": {}, \"delta_ns\": {}, \"hits\": {}}}",
            stage.ts_ns, stage.last_ns, stage.delta_ns, stage.hits
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
