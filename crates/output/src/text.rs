//! The default text output, byte for byte like bpftrace 0.17's `TextOutput`.

use std::io::{self, Write};

use crate::flat::{EntrySource, FlatMap, shown_range};
use crate::hist::{bar_width, hist_range, lhist_range};
use crate::sink::Sink;
use crate::stream::StreamRecord;
use crate::value::{Integer, MapDump, MapEntryValue, Value, average};

/// Writes bpftrace's human-readable output.
pub struct TextSink<W: Write> {
    out: W,
}

impl<W: Write> TextSink<W> {
    pub fn new(out: W) -> Self {
        TextSink { out }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Sink for TextSink<W> {
    fn attached_probes(&mut self, count: u64) -> io::Result<()> {
        let noun = if count == 1 { "probe" } else { "probes" };
        writeln!(self.out, "Attaching {count} {noun}...")
    }

    fn lost_events(&mut self, count: u64) -> io::Result<()> {
        writeln!(self.out, "Lost {count} events")
    }

    fn printf(&mut self, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)
    }

    fn cat(&mut self, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)
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
        write_map_text(&mut self.out, &mut &*map, top, div)
    }

    fn flat_map(&mut self, map: &mut FlatMap<'_>, top: u64, div: u64) -> io::Result<()> {
        write_map_text(&mut self.out, map, top, div)
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

/// One map as `print(@m, top, div)` writes it, trailing newlines included.
pub fn map_text(map: &MapDump, top: u64, div: u64) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_map_text(&mut out, &mut &*map, top, div);
    out
}

/// [`map_text`], written entry by entry.
pub(crate) fn write_map_text<W: Write + ?Sized>(
    out: &mut W,
    map: &mut dyn EntrySource,
    top: u64,
    div: u64,
) -> io::Result<()> {
    let div = div.max(1);
    let kind = map.kind();
    let name = map.name().as_bytes().to_vec();
    let mut text = Vec::new();
    for (index, at) in shown_range(map.len(), kind, top).enumerate() {
        let entry = map.entry(at);
        text.clear();
        if index > 0 {
            text.push(b'\n');
        }
        text.extend_from_slice(&name);
        if !entry.key.is_empty() {
            text.push(b'[');
            for (i, arg) in entry.key.iter().enumerate() {
                if i > 0 {
                    text.extend_from_slice(b", ");
                }
                text.extend_from_slice(&key_text(arg));
            }
            text.push(b']');
        }
        text.extend_from_slice(b": ");
        if kind.is_hist() {
            text.push(b'\n');
        }
        entry_value_text(&entry.value, div, &mut text);
        out.write_all(&text)?;
    }
    out.write_all(b"\n")?;
    if kind.is_stats() {
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn entry_value_text(value: &MapEntryValue, div: u64, out: &mut Vec<u8>) {
    match value {
        MapEntryValue::Plain(v) => out.extend_from_slice(&value_text_divided(v, div)),
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
                "count {}, average {}, total {}",
                *count as i64,
                average(*count, *total),
                total
            )
            .as_bytes(),
        ),
        MapEntryValue::Hist(buckets) => hist_text(buckets, div, out),
        MapEntryValue::Lhist {
            min,
            max,
            step,
            buckets,
        } => lhist_text(buckets, *min, *max, *step, out),
    }
}

/// A value as `print(value)` and map values show it.
pub fn value_text(value: &Value) -> Vec<u8> {
    value_text_divided(value, 1)
}

fn value_text_divided(value: &Value, div: u64) -> Vec<u8> {
    let div = div.max(1);
    match value {
        Value::Int(v) => Integer::Signed(*v).divided(div).to_string().into_bytes(),
        Value::UInt(v) => (v / div).to_string().into_bytes(),
        // bpftrace 0.17 has no pointer case for values: it prints the int64.
        Value::Pointer(v) => Integer::Signed(*v as i64)
            .divided(div)
            .to_string()
            .into_bytes(),
        Value::Str(bytes) => bytes.clone(),
        Value::Bool(b) => b.to_string().into_bytes(),
        Value::Tuple(fields) => {
            let mut out = vec![b'('];
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                out.extend_from_slice(&value_text_divided(field, div));
            }
            out.push(b')');
            out
        }
        Value::Bytes(bytes) => hex_buffer(bytes),
        Value::None => Vec::new(),
        Value::Stack(stack) => crate::stack::stack_text(stack, 4),
        Value::Sym(sym) => crate::stack::sym_text(sym),
        Value::CgroupPath(cg) => crate::stack::cgroup_path_text(cg),
    }
}

/// A key argument as bpftrace's `MapKey::argument_value` shows it.
pub(crate) fn key_text(arg: &Value) -> Vec<u8> {
    match arg {
        Value::Pointer(v) => format!("0x{v:x}").into_bytes(),
        other => value_text(other),
    }
}

/// `resolve_buf`: printable ASCII kept, other bytes as `\xNN`.
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

fn hist_text(buckets: &[u64], div: u64, out: &mut Vec<u8>) {
    let Some(range) = hist_range(buckets) else {
        return;
    };
    let shown = buckets
        .iter()
        .enumerate()
        .take(range.last + 1)
        .skip(range.first);
    for (index, &count) in shown {
        let label = match index {
            0 => "(..., 0)".to_string(),
            1 => "[0]".to_string(),
            2 => "[1]".to_string(),
            _ => format!("[{}, {})", power_label(index - 2), power_label(index - 1)),
        };
        bucket_line(&label, count / div, bar_width(count, range.max_count), out);
    }
}

fn lhist_text(buckets: &[u64], min: i64, max: i64, step: i64, out: &mut Vec<u8>) {
    let Some(range) = lhist_range(buckets, min, max, step) else {
        return;
    };
    let shown = buckets
        .iter()
        .enumerate()
        .take(range.last + 1)
        .skip(range.first);
    for (index, &count) in shown {
        let i = index as i64;
        let label = if index == 0 {
            format!("(..., {})", number_label(min))
        } else if i == range.steps.saturating_add(1) {
            format!("[{}, ...)", number_label(max))
        } else {
            format!(
                "[{}, {})",
                number_label(step_start(i - 1, step, min)),
                number_label(step_start(i, step, min))
            )
        };
        bucket_line(&label, count, bar_width(count, range.max_count), out);
    }
}

/// `std::setw(16) << std::left << label << std::setw(8) << std::right << count
/// << " |" << std::setw(52) << std::left << bar << "|"`.
fn bucket_line(label: &str, count: u64, bar: usize, out: &mut Vec<u8>) {
    let line = format!("{label:<16}{count:>8} |{:<52}|\n", "@".repeat(bar));
    out.extend_from_slice(line.as_bytes());
}

/// `TextOutput::hist_index_label`: 2^power with a K/M/G/T suffix.
fn power_label(power: usize) -> String {
    let (power, suffix) = match power {
        40.. => (power - 40, "T"),
        30.. => (power - 30, "G"),
        20.. => (power - 20, "M"),
        10.. => (power - 10, "K"),
        _ => (power, ""),
    };
    // bpftrace computes `1 << power` in an `int`; power stays below 24 here.
    format!("{}{suffix}", 1i64 << power.min(62))
}

/// `TextOutput::lhist_index_label`: exact multiples of 1M or 1K get a suffix.
fn number_label(number: i64) -> String {
    const KILO: i64 = 1024;
    const MEGA: i64 = 1024 * 1024;
    if number == 0 {
        "0".to_string()
    } else if number % MEGA == 0 {
        format!("{}M", number / MEGA)
    } else if number % KILO == 0 {
        format!("{}K", number / KILO)
    } else {
        number.to_string()
    }
}

/// The lower bound of lhist step `index` (wrapping, as garbage specs must not panic).
pub(crate) fn step_start(index: i64, step: i64, min: i64) -> i64 {
    index.wrapping_mul(step).wrapping_add(min)
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
/// - in brackets, the stages in order separated by ` > `, each with the time
///   since the previous reached stage (`+0` for the first), `-` if it was
///   never reached, and `xN` after it when it fired N > 1 times, then
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
