//! The default text output, byte for byte like bpftrace's current
//! `TextOutput`: maps as `@m[key]: value` lines (histograms under an
//! `@m[key]:` header), `print(value)` as the value alone, and the messages
//! (`Attached N probes`, lost events) on a stream of their own, as bpftrace
//! writes them to stderr.

use std::io::{self, Write};

use crate::flat::{EntrySource, FlatMap, shown_range};
use crate::hist::{Bucket, bar_width, bits_of, hist_buckets, lhist_buckets};
use crate::sink::{Severity, Sink};
use crate::stream::StreamRecord;
use crate::value::{Integer, MapDump, MapEntryValue, MapKind, Value, average};

/// Writes bpftrace's human-readable output.
pub struct TextSink<W: Write> {
    out: W,
    /// Where `Attached N probes` and `Lost N events` go (bpftrace: stderr);
    /// nowhere when not given.
    messages: Option<Box<dyn Write>>,
    /// The local time's offset from UTC in seconds at a time (seconds
    /// since the epoch), for the clock times of time series; UTC when not given.
    local_offset: Box<dyn Fn(i64) -> i64>,
}

impl<W: Write> TextSink<W> {
    pub fn new(out: W) -> Self {
        TextSink {
            out,
            messages: None,
            local_offset: Box::new(|_| 0),
        }
    }

    /// Shows the clock times of time series in the local time `offset` gives
    /// (seconds from UTC at a time in seconds since the epoch).
    pub fn with_local_time(mut self, offset: Box<dyn Fn(i64) -> i64>) -> Self {
        self.local_offset = offset;
        self
    }

    /// Sends the messages bpftrace writes to stderr to `messages`.
    pub fn with_messages(mut self, messages: Box<dyn Write>) -> Self {
        self.messages = Some(messages);
        self
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn message(&mut self, text: &str) -> io::Result<()> {
        match &mut self.messages {
            Some(m) => {
                // Output already written comes first, as bpftrace's streams do.
                self.out.flush()?;
                m.write_all(text.as_bytes())?;
                m.flush()
            }
            None => Ok(()),
        }
    }
}

impl<W: Write> Sink for TextSink<W> {
    fn attached_probes(&mut self, count: u64) -> io::Result<()> {
        let noun = if count == 1 { "probe" } else { "probes" };
        self.message(&format!("Attached {count} {noun}\n"))
    }

    fn lost_events(&mut self, count: u64) -> io::Result<()> {
        self.message(&format!("Lost {count} events\n"))
    }

    fn printf(&mut self, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)
    }

    fn cat(&mut self, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)
    }

    fn source_message(
        &mut self,
        severity: Severity,
        text: &[u8],
        origin: &[abi::SourcePlace],
    ) -> io::Result<()> {
        let message = source_message_text(severity, text, origin);
        self.message(&message)
    }

    fn runtime_warning(&mut self, text: &[u8], origin: &[abi::SourcePlace]) -> io::Result<()> {
        let message = runtime_message_text(text, origin);
        self.message(&message)
    }

    fn time(&mut self, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)
    }

    fn join(&mut self, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)?;
        self.out.write_all(b"\n")
    }

    fn value(&mut self, value: &Value) -> io::Result<()> {
        self.out.write_all(&value_text(value))?;
        self.out.write_all(b"\n")
    }

    fn map(&mut self, map: &MapDump, top: u64, div: u64) -> io::Result<()> {
        write_map_text(&mut self.out, &mut &*map, top, div, &*self.local_offset)
    }

    fn flat_map(&mut self, map: &mut FlatMap<'_>, top: u64, div: u64) -> io::Result<()> {
        write_map_text(&mut self.out, map, top, div, &*self.local_offset)
    }

    fn stream_record(&mut self, record: &StreamRecord<'_>) -> io::Result<()> {
        write_stream_text(&mut self.out, record)
    }

    fn exit_separator(&mut self) -> io::Result<()> {
        self.out.write_all(b"\n\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// An `errorf()`/`warnf()` message as bpftrace writes it on stderr: the
/// call's location, `ERROR: ` or `WARNING: ` and the text (less one final
/// newline); then, for each macro use it was expanded from, its location,
/// `expanded from`, its line and `~` under the use.
pub fn source_message_text(severity: Severity, text: &[u8], origin: &[abi::SourcePlace]) -> String {
    let level = match severity {
        Severity::Error => "ERROR",
        Severity::Warning => "WARNING",
    };
    let text = String::from_utf8_lossy(text.strip_suffix(b"\n").unwrap_or(text));
    let mut out = String::new();
    let mut places = origin.iter();
    match places.next() {
        Some(call) => out.push_str(&format!("{}: {level}: {text}\n", call.location())),
        None => out.push_str(&format!("{level}: {text}\n")),
    }
    for used in places {
        out.push_str(&format!("{}: {level}: expanded from\n", used.location()));
        for line in &used.context {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A warning about the program's run as bpftrace writes its runtime errors
/// on stderr: as [`source_message_text`], with the place's line and `~`
/// under it after the message.
pub fn runtime_message_text(text: &[u8], origin: &[abi::SourcePlace]) -> String {
    let mut out = source_message_text(Severity::Warning, text, origin);
    if let Some(place) = origin.first() {
        let first_line = out.find('\n').map_or(out.len(), |n| n + 1);
        let context: String = place.context.iter().map(|l| format!("{l}\n")).collect();
        out.insert_str(first_line, &context);
    }
    out
}

/// One map as `print(@m, top, div)` writes it: nothing for an empty map.
pub fn map_text(map: &MapDump, top: u64, div: u64) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_map_text(&mut out, &mut &*map, top, div, &|_| 0);
    out
}

/// [`map_text`], written entry by entry: `@m[key]: value` per entry (the
/// key's arguments joined by `, `), `@m[key]:` then the histogram's lines
/// and an empty line for hist and lhist maps, time series drawn as graphs
/// (clock times in the local time `local_offset` gives).
pub(crate) fn write_map_text<W: Write + ?Sized>(
    out: &mut W,
    map: &mut dyn EntrySource,
    top: u64,
    div: u64,
    local_offset: &dyn Fn(i64) -> i64,
) -> io::Result<()> {
    let div = div.max(1);
    let kind = map.kind();
    let epochs = tseries_epochs(map);
    let name = map.name().as_bytes().to_vec();
    let keyed = map.keyed();
    let mut text = Vec::new();
    for at in shown_range(map.len(), top) {
        let entry = map.entry(at);
        text.clear();
        text.extend_from_slice(&name);
        if keyed || !entry.key.is_empty() {
            text.push(b'[');
            text.extend_from_slice(&key_text(&entry.key));
            text.push(b']');
        }
        if let MapEntryValue::Tseries(series) = &entry.value {
            text.extend_from_slice(b":\n");
            let points = crate::tseries::points(series, epochs);
            crate::tseries::text(&points, local_offset, &mut text);
            text.push(b'\n');
        } else if kind.is_hist() {
            text.extend_from_slice(b":\n");
            entry_value_text(&entry.value, div, &mut text);
            text.push(b'\n');
        } else {
            text.extend_from_slice(b": ");
            entry_value_text(&entry.value, div, &mut text);
            text.push(b'\n');
        }
        out.write_all(&text)?;
    }
    Ok(())
}

fn entry_value_text(value: &MapEntryValue, div: u64, out: &mut Vec<u8>) {
    match value {
        MapEntryValue::Plain(v) => write_value(out, v, div),
        MapEntryValue::Count(n) => out.extend_from_slice((n / div).to_string().as_bytes()),
        MapEntryValue::Sum(n) | MapEntryValue::Min(n) | MapEntryValue::Max(n) => {
            out.extend_from_slice(n.divided(div).to_string().as_bytes())
        }
        MapEntryValue::Avg { count, total } => {
            let avg = Integer::Signed(average(*count, *total)).divided(div);
            out.extend_from_slice(avg.to_string().as_bytes());
        }
        MapEntryValue::Stats { count, total } => out.extend_from_slice(
            format!(
                "{{ .count = {count}, .average = {}, .total = {total} }}",
                Integer::Signed(average(*count, *total)).divided(div),
            )
            .as_bytes(),
        ),
        MapEntryValue::Hist(buckets) => {
            histogram_text(&hist_buckets(buckets, bits_of(buckets.len()), div), out)
        }
        MapEntryValue::Lhist {
            min,
            max,
            step,
            buckets,
        } => histogram_text(&lhist_buckets(buckets, *min, *max, *step), out),
        // Drawn by `write_map_text`, which knows the map's epochs.
        MapEntryValue::Tseries(_) => {}
    }
}

/// The epochs the time series of `map` show (see `tseries::shown_epochs`):
/// up to the latest epoch of any of its entries.
pub(crate) fn tseries_epochs(map: &mut dyn EntrySource) -> (u64, u64) {
    if map.kind() != MapKind::Tseries {
        return (1, 0);
    }
    let mut latest = None;
    let mut intervals = 1;
    for at in 0..map.len() {
        if let MapEntryValue::Tseries(series) = &map.entry(at).value {
            intervals = series.intervals;
            latest = latest.max(Some(series.latest_epoch()));
        }
    }
    crate::tseries::shown_epochs(latest, intervals)
}

/// A value as `print(value)` and map values show it.
pub fn value_text(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write_value(&mut out, value, 1);
    out
}

/// A value's text, integers divided by `div` (`print(@m, top, div)`).
fn write_value(out: &mut Vec<u8>, value: &Value, div: u64) {
    match value {
        Value::Int(v) => {
            out.extend_from_slice(Integer::Signed(*v).divided(div).to_string().as_bytes())
        }
        Value::UInt(v) => out.extend_from_slice((v / div).to_string().as_bytes()),
        Value::Pointer(v) => out.extend_from_slice(format!("0x{v:x}").as_bytes()),
        Value::Enum { value, name } => match name {
            Some(name) => out.extend_from_slice(name.as_bytes()),
            None => out.extend_from_slice(value.to_string().as_bytes()),
        },
        Value::Str(bytes) => out.extend_from_slice(bytes),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Tuple(fields) => {
            out.push(b'(');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_value(out, field, div);
            }
            out.push(b')');
        }
        Value::Record(fields) if fields.is_empty() => out.extend_from_slice(b"{}"),
        Value::Record(fields) => {
            out.extend_from_slice(b"{ ");
            for (i, (name, field)) in fields.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.push(b'.');
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(b" = ");
                write_value(out, field, div);
            }
            out.extend_from_slice(b" }");
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item, div);
            }
            out.push(b']');
        }
        Value::Bytes(bytes) => out.extend_from_slice(&hex_buffer(bytes)),
        Value::None => out.extend_from_slice(b"null"),
        Value::Stack(stack) => out.extend_from_slice(&crate::stack::stack_text(stack, 8)),
        Value::Sym(sym) => out.extend_from_slice(&crate::stack::sym_text(sym)),
        Value::CgroupPath(cg) => out.extend_from_slice(&crate::stack::cgroup_path_text(cg)),
        Value::Timestamp(t) => out.extend_from_slice(&crate::stack::timestamp_text(t)),
        Value::User(u) => out.extend_from_slice(&crate::stack::user_text(u)),
    }
}

/// A key as its map line shows it: the arguments joined by `, ` (a single
/// tuple argument loses its parentheses too, as bpftrace strips them from
/// the key's text).
pub(crate) fn key_text(key: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    match key {
        [single] => {
            write_value(&mut out, single, 1);
            if out.len() >= 2 && out[0] == b'(' && out[out.len() - 1] == b')' {
                out.pop();
                out.remove(0);
            }
        }
        args => {
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_value(&mut out, arg, 1);
            }
        }
    }
    out
}

/// `hex_format_buffer`: printable ASCII kept, other bytes as `\xNN`.
fn hex_buffer(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in bytes {
        if (32..=126).contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
        }
    }
    out
}

/// One line per shown bucket: `std::setw(16) << std::left << header <<
/// std::setw(8) << std::right << count << " |" << std::setw(52) <<
/// std::left << bar << "|"`.
fn histogram_text(buckets: &[Bucket], out: &mut Vec<u8>) {
    let max_count = buckets.iter().map(|b| b.count).max().unwrap_or(0);
    for bucket in buckets {
        let bar = "@".repeat(bar_width(bucket.count, max_count));
        let line = format!("{:<16}{:>8} |{bar:<52}|\n", bucket.header(), bucket.count);
        out.extend_from_slice(line.as_bytes());
    }
}

/// A duration for people (see [`crate::stream::duration_text`]).
pub(crate) fn write_duration(out: &mut dyn Write, ns: u64) -> io::Result<()> {
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
/// - `dur=` the total duration (see [`crate::stream::duration_text`]), or the word
///   `incomplete` for an instance that never reached its end stage;
/// - `out-of-order` when a stage fired before the reached stage written
///   before it;
/// - in brackets, the stages in order separated by ` > `, each with the time
///   since the previous reached stage (`+0` for the first; `-D` when it
///   fired D before it, so the times add up to each stage's offset from the
///   start), `-` if it was never reached, `@TID:COMM` when another task than
///   `begin`'s ran its first hit, and `xN` after it when it fired N > 1 times, then
///   `(last +D)` with the time from its first hit to its last;
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
    match (&record.cgroup_path, record.cgroup) {
        (Some(path), _) => {
            out.write_all(b" cgroup=")?;
            write_logfmt(out, path.as_bytes())?;
        }
        (None, 0) => {}
        (None, id) => write!(out, " cgroup={id}")?,
    }
    if record.sample > 1 {
        write!(out, " sample=1/{}", record.sample)?;
    }
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
    if !record.in_order {
        out.write_all(b" out-of-order")?;
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
            out.write_all(if stage.delta_ns < 0 { b" -" } else { b" +" })?;
            write_duration(out, stage.delta_ns.unsigned_abs())?;
        }
        if stage.ts_ns != 0 {
            first_reached = false;
        }
        if stage.ran_elsewhere(record) {
            // Another task ran it: its thread id, and its comm when known.
            write!(out, " @{}", stage.tid)?;
            if !stage.comm.is_empty() {
                out.write_all(b":")?;
                write_logfmt(out, stage.comm)?;
            }
        }
        if stage.hits > 1 {
            write!(out, " x{}", stage.hits)?;
            if stage.last_ns > stage.ts_ns {
                out.write_all(b" (last +")?;
                write_duration(out, stage.last_ns - stage.ts_ns)?;
                out.write_all(b")")?;
            }
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
