//! `-f json`: one JSON object per line, byte for byte like bpftrace's
//! current `JsonOutput` (spacing, key joining and its string escaping
//! included): maps and `print()`ed values with their types, numbers that a
//! double cannot hold exactly as strings, and the `attached_probes` and
//! `lost_events` records with their `count`.

use std::io::{self, Write};

use crate::flat::{EntrySource, FlatMap, shown_range};
use crate::hist::{Bucket, Label, bits_of, hist_buckets, lhist_buckets};
use crate::sink::{Severity, Sink};
use crate::stream::StreamRecord;
use crate::text::key_text;
use crate::value::{Integer, MapDump, MapEntryValue, MapKind, Value, average};

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
            "{{\"type\": \"attached_probes\", \"count\": {count}, \"data\": {{\"probes\": {count}}}}}"
        )
    }

    fn benchmark(
        &mut self,
        names: &[String],
        index: usize,
        mean_ns: u64,
        iters: u64,
    ) -> io::Result<()> {
        let name = names.get(index).map(String::as_str).unwrap_or("");
        self.out
            .write_all(b"{\"type\": \"benchmark_result\", \"data\": {\"")?;
        self.out.write_all(&escape(name.as_bytes()))?;
        writeln!(
            self.out,
            "\": {{\"average\": {mean_ns}, \"iters\": {iters}}}}}}}"
        )
    }

    fn lost_events(&mut self, count: u64) -> io::Result<()> {
        writeln!(
            self.out,
            "{{\"type\": \"lost_events\", \"count\": {count}, \"data\": {{\"events\": {count}}}}}"
        )
    }

    fn printf(&mut self, text: &[u8]) -> io::Result<()> {
        self.message("printf", text)
    }

    fn cat(&mut self, text: &[u8]) -> io::Result<()> {
        self.message("cat", text)
    }

    /// bpftrace's record names the call only, not the macro uses.
    fn source_message(
        &mut self,
        severity: Severity,
        text: &[u8],
        origin: &[abi::SourcePlace],
    ) -> io::Result<()> {
        let kind = match severity {
            Severity::Error => "errorf",
            Severity::Warning => "warnf",
        };
        write!(self.out, "{{\"type\": \"{kind}\", \"msg\": \"")?;
        self.out.write_all(&escape(text))?;
        let call = origin.first().cloned().unwrap_or_default();
        write!(self.out, "\", \"filename\": \"")?;
        self.out.write_all(&escape(call.file.as_bytes()))?;
        writeln!(
            self.out,
            "\", \"line\": {}, \"col\": {}}}",
            call.line, call.column
        )
    }

    /// bpftrace's `runtime_error` record, naming the top place only.
    fn runtime_warning(&mut self, text: &[u8], origin: &[abi::SourcePlace]) -> io::Result<()> {
        write!(self.out, "{{\"type\": \"runtime_error\", \"msg\": \"")?;
        self.out.write_all(&escape(text))?;
        let place = origin.first().cloned().unwrap_or_default();
        write!(self.out, "\", \"filename\": \"")?;
        self.out.write_all(&escape(place.file.as_bytes()))?;
        writeln!(
            self.out,
            "\", \"line\": {}, \"col\": {}}}",
            place.line, place.column
        )
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
        // bpftrace's JSON output writes nothing between the run and the maps.
        Ok(())
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

/// [`map_json`], written entry by entry: `{"type": "map", "data": {"@m":
/// VALUE}}` for a keyless map, `{"@m": {"KEY": VALUE, ...}}` for a keyed
/// one (the key's text without spaces); type `hist` or `stats` for those
/// maps.
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
    let epochs = crate::text::tseries_epochs(map);
    let label = if kind.is_stats() {
        "stats"
    } else if kind == MapKind::Tseries {
        "tseries"
    } else if kind.is_hist() {
        "hist"
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
    for (index, at) in shown_range(len, top).enumerate() {
        let entry = map.entry(at);
        text.clear();
        if index > 0 {
            text.extend_from_slice(b", ");
        }
        if keyed {
            let mut key = key_text(&entry.key);
            key.retain(|&b| b != b' ');
            text.push(b'"');
            text.extend_from_slice(&escape(&key));
            text.extend_from_slice(b"\": ");
        }
        match &entry.value {
            MapEntryValue::Tseries(series) => {
                crate::tseries::json(&crate::tseries::points(series, epochs), &mut text)
            }
            value => entry_value_json(value, div, &mut text),
        }
        out.write_all(&text)?;
        if !keyed {
            // A keyless map has one entry.
            break;
        }
    }
    if keyed {
        out.write_all(b"}")?;
    }
    out.write_all(b"}}\n")
}

fn entry_value_json(value: &MapEntryValue, div: u64, out: &mut Vec<u8>) {
    match value {
        MapEntryValue::Plain(v) => out.extend_from_slice(&value_json(v, div)),
        MapEntryValue::Count(n) => out.extend_from_slice(&unsigned(n / div)),
        MapEntryValue::Sum(n) | MapEntryValue::Min(n) | MapEntryValue::Max(n) => {
            out.extend_from_slice(&integer(n.divided(div)))
        }
        MapEntryValue::Avg { count, total } => out.extend_from_slice(&integer(
            Integer::Signed(average(*count, *total)).divided(div),
        )),
        MapEntryValue::Stats { count, total } => {
            out.extend_from_slice(b"{\"count\": ");
            out.extend_from_slice(&unsigned(*count));
            out.extend_from_slice(b", \"average\": ");
            out.extend_from_slice(&integer(
                Integer::Signed(average(*count, *total)).divided(div),
            ));
            out.extend_from_slice(b", \"total\": ");
            out.extend_from_slice(&signed(*total));
            out.push(b'}');
        }
        MapEntryValue::Hist(buckets) => {
            histogram_json(&hist_buckets(buckets, bits_of(buckets.len()), div), out)
        }
        MapEntryValue::Lhist {
            min,
            max,
            step,
            buckets,
        } => histogram_json(&lhist_buckets(buckets, *min, *max, *step), out),
        // Written by `write_map_json`, which knows the map's epochs.
        MapEntryValue::Tseries(_) => {}
    }
}

/// A value in JSON: strings quoted, tuples and arrays as arrays without
/// spaces, records as objects, pointers as numbers, integers divided by
/// `div`.
pub fn value_json(value: &Value, div: u64) -> Vec<u8> {
    let mut out = Vec::new();
    write_value_json(&mut out, value, div.max(1));
    out
}

fn write_value_json(out: &mut Vec<u8>, value: &Value, div: u64) {
    match value {
        Value::Int(v) => out.extend_from_slice(&integer(Integer::Signed(*v).divided(div))),
        Value::UInt(v) => out.extend_from_slice(&unsigned(v / div)),
        Value::Pointer(v) => out.extend_from_slice(&unsigned(*v)),
        // bpftrace's JSON gives an enum value as its number.
        Value::Enum { value, .. } => out.extend_from_slice(&unsigned(*value)),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Str(_)
        | Value::Stack(_)
        | Value::Sym(_)
        | Value::CgroupPath(_)
        | Value::Timestamp(_)
        | Value::User(_) => {
            out.push(b'"');
            out.extend_from_slice(&escape(&crate::text::value_text(value)));
            out.push(b'"');
        }
        // bpftrace emits a buffer's bytes as (signed) chars.
        Value::Bytes(bytes) => {
            out.push(b'[');
            for (i, &b) in bytes.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice((b as i8).to_string().as_bytes());
            }
            out.push(b']');
        }
        Value::Tuple(items) | Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value_json(out, item, div);
            }
            out.push(b']');
        }
        Value::Record(fields) => {
            out.push(b'{');
            for (i, (name, field)) in fields.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.push(b'"');
                out.extend_from_slice(&escape(name.as_bytes()));
                out.extend_from_slice(b"\": ");
                write_value_json(out, field, div);
            }
            out.push(b'}');
        }
        Value::None => out.extend_from_slice(b"null"),
    }
}

/// An integer as bpftrace writes it: a number when a double holds it
/// exactly (RFC 8259's advice), else its digits as a string.
fn integer(value: Integer) -> Vec<u8> {
    match value {
        Integer::Signed(v) => signed(v),
        Integer::Unsigned(v) => unsigned(v),
    }
}

fn signed(v: i64) -> Vec<u8> {
    number_text(v.to_string(), (v as f64) as i128 == i128::from(v))
}

fn unsigned(v: u64) -> Vec<u8> {
    number_text(v.to_string(), (v as f64) as i128 == i128::from(v))
}

fn number_text(digits: String, exact: bool) -> Vec<u8> {
    if exact {
        digits.into_bytes()
    } else {
        format!("\"{digits}\"").into_bytes()
    }
}

/// bpftrace's JSON string escaping. It tests `c <= '\x1f'` on a signed
/// `char`, so every byte >= 0x80 is also escaped, as the sign-extended `int`
/// in hex (`é` becomes `\uffffffc3\uffffffa9`).
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

/// The shown buckets as `[{"min": A, "max": B, "count": N},...]`: `max`
/// is the closed upper bound, the first bucket may lack `min` and the
/// last `max`.
fn histogram_json(buckets: &[Bucket], out: &mut Vec<u8>) {
    let bound = |label: &Label| match label {
        Label::Int(v) => signed(*v),
        Label::Symbolic { value, .. } => unsigned(*value),
    };
    out.push(b'[');
    for (i, bucket) in buckets.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        if let Some(lower) = &bucket.lower {
            out.extend_from_slice(b"\"min\": ");
            out.extend_from_slice(&bound(lower));
            out.extend_from_slice(b", ");
        }
        if let Some(upper) = &bucket.upper {
            out.extend_from_slice(b"\"max\": ");
            out.extend_from_slice(&signed(upper.one_less()));
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(b"\"count\": ");
        out.extend_from_slice(&unsigned(bucket.count));
        out.push(b'}');
    }
    out.push(b']');
}

/// Writes one record as one JSON line (the `-f json` format), in bpftrace's
/// envelope style and with its string escaping:
///
/// ```text
/// {"type": "stream", "data": {"stream": "read_req", "complete": true, "pid": 1234, "tid": 1234, "comm": "weftwl", "cgroup": 1, "cgroup_path": "/", "start_ns": 5012345678901, "end_ns": 5012345694135, "duration_ns": 15234, "in_order": true, "stages": [{"name": "sys_enter_read", "ts_ns": 5012345678901, "last_ns": 5012345678901, "offset_ns": 0, "delta_ns": 0, "hits": 1}, {"name": "sys_exit_read", "ts_ns": 5012345694135, "last_ns": 5012345694135, "offset_ns": 15234, "delta_ns": 15234, "hits": 1}], "fields": {"fd": 3, "bytes": 4096}}}
/// ```
///
/// `end_ns` and `duration_ns` are 0 for an incomplete record; a stage's
/// `ts_ns` is its first hit (its last with `keep last`), `last_ns` its last,
/// `offset_ns` its time since the instance began, `delta_ns` its time since
/// the previous reached stage in written order (negative when it fired
/// before it: then `in_order` is false), all 0 for a stage never reached;
/// a stage whose first hit ran in another task than `begin` also has that
/// task's `pid`, `tid` and `comm`. Field values are written
/// as `print()` writes them in JSON (`null` for a value without one), but
/// a `buf()` as its text.
pub fn write_stream_json(out: &mut dyn Write, record: &StreamRecord<'_>) -> io::Result<()> {
    out.write_all(b"{\"type\": \"stream\", \"data\": {\"stream\": \"")?;
    out.write_all(&escape(record.stream.as_bytes()))?;
    write!(
        out,
        "\", \"complete\": {}, \"pid\": {}, \"tid\": {}, \"comm\": \"",
        record.complete, record.pid, record.tid
    )?;
    out.write_all(&escape(record.comm))?;
    write!(out, "\", \"cgroup\": {}, \"cgroup_path\": ", record.cgroup)?;
    match &record.cgroup_path {
        Some(path) => {
            out.write_all(b"\"")?;
            out.write_all(&escape(path.as_bytes()))?;
            out.write_all(b"\"")?;
        }
        None => out.write_all(b"null")?,
    }
    if record.sample > 1 {
        write!(out, ", \"sample\": {}", record.sample)?;
    }
    write!(
        out,
        ", \"start_ns\": {}, \"end_ns\": {}, \"duration_ns\": {}, \"in_order\": {}, \"stages\": [",
        record.start_ns, record.end_ns, record.duration_ns, record.in_order
    )?;
    for (index, stage) in record.stages.iter().enumerate() {
        if index > 0 {
            out.write_all(b", ")?;
        }
        out.write_all(b"{\"name\": \"")?;
        out.write_all(&escape(stage.name.as_bytes()))?;
        write!(
            out,
            "\", \"ts_ns\": {}, \"last_ns\": {}, \"offset_ns\": {}, \"delta_ns\": {}, \"hits\": {}",
            stage.ts_ns, stage.last_ns, stage.offset_ns, stage.delta_ns, stage.hits
        )?;
        if stage.ran_elsewhere(record) {
            write!(
                out,
                ", \"pid\": {}, \"tid\": {}, \"comm\": \"",
                stage.pid, stage.tid
            )?;
            out.write_all(&escape(stage.comm))?;
            out.write_all(b"\"")?;
        }
        out.write_all(b"}")?;
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
            // A buffer as its text (`print()` gives its bytes as numbers).
            Value::Bytes(_) => {
                out.write_all(b"\"")?;
                out.write_all(&escape(&crate::text::value_text(value)))?;
                out.write_all(b"\"")?;
            }
            other => out.write_all(&value_json(other, 1))?,
        }
    }
    out.write_all(b"}}}\n")
}
