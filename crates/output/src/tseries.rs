//! `tseries()` values: the per-CPU intervals merged as bpftrace's current
//! release merges them (`reduce_tseries_value`), the intervals a map shows
//! (`build_time_series`: the last `intervals` epochs up to the latest of
//! any entry), and their text graph and JSON list, byte for byte.
//!
//! An interval (see `abi::Aggregation::Tseries`) is `value, meta, epoch +
//! 1`. Over CPUs, only those that wrote the interval's latest epoch count:
//! the last value written wins (by `meta`, the time it was written), or
//! values are summed, averaged (`meta` counts them), or the least or
//! greatest kept. bpftrace treats epoch 0 as "never written", so an
//! interval written only at epoch 0 (possible with `BPFTRACE_DUMMY_TS_MAP`)
//! reads as value 0 at epoch 0, as it does there.

use std::collections::BTreeMap;

use abi::{Aggregation, TSERIES_SLOT, TseriesAgg};

use crate::value::{Integer, TseriesValue};

/// Words of one interval.
const VALUE: usize = 0;
const META: usize = 1;
const EPOCH: usize = 2;

fn word(bytes: &[u8], slot: usize, index: usize) -> u64 {
    let at = slot * TSERIES_SLOT as usize + index * 8;
    bytes
        .get(at..at + 8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
}

fn put_word(out: &mut [u8], slot: usize, index: usize, value: u64) {
    let at = slot * TSERIES_SLOT as usize + index * 8;
    if let Some(b) = out.get_mut(at..at + 8) {
        b.copy_from_slice(&value.to_le_bytes());
    }
}

/// Interval `slot` merged over the CPUs: `None` if no CPU wrote it, else
/// its epoch and value (the value's bits; signed when `signed`).
fn reduce_slot<B: AsRef<[u8]>>(
    per_cpu: &[B],
    slot: usize,
    agg: TseriesAgg,
    signed: bool,
) -> Option<(u64, u64)> {
    let mut written = false;
    // (epoch, value, meta) of the latest epoch so far.
    let mut latest: Option<(u64, u64, u64)> = None;
    for cpu in per_cpu {
        let cpu = cpu.as_ref();
        let tag = word(cpu, slot, EPOCH);
        if tag == 0 {
            continue;
        }
        written = true;
        let epoch = tag - 1;
        if epoch == 0 {
            continue;
        }
        let (value, meta) = (word(cpu, slot, VALUE), word(cpu, slot, META));
        latest = Some(match latest {
            Some((e, _, _)) if e > epoch => continue,
            Some((e, v, m)) if e == epoch => match agg {
                TseriesAgg::Last if meta > m => (e, value, meta),
                TseriesAgg::Last => (e, v, m),
                TseriesAgg::Avg => (e, v.wrapping_add(value), m.wrapping_add(meta)),
                TseriesAgg::Sum => (e, v.wrapping_add(value), m),
                TseriesAgg::Min | TseriesAgg::Max => {
                    let new_wins = match (agg == TseriesAgg::Min, signed) {
                        (true, true) => (value as i64) < (v as i64),
                        (true, false) => value < v,
                        (false, true) => (value as i64) > (v as i64),
                        (false, false) => value > v,
                    };
                    (e, if new_wins { value } else { v }, m)
                }
            },
            _ => (epoch, value, meta),
        });
    }
    if !written {
        return None;
    }
    let Some((epoch, value, meta)) = latest else {
        return Some((0, 0));
    };
    let value = if agg == TseriesAgg::Avg && meta != 0 {
        if signed {
            (value as i64).wrapping_div(meta as i64) as u64
        } else {
            value / meta
        }
    } else {
        value
    };
    Some((epoch, value))
}

/// The merged value of one `tseries()` entry from its per-CPU buffers.
pub(crate) fn merge_value<B: AsRef<[u8]>>(agg: &Aggregation, per_cpu: &[B]) -> TseriesValue {
    let Aggregation::Tseries {
        interval_ns,
        intervals,
        agg,
        signed,
    } = *agg
    else {
        return TseriesValue {
            interval_ns: 1,
            intervals: 1,
            values: BTreeMap::new(),
        };
    };
    let mut values = BTreeMap::new();
    for slot in 0..intervals as usize {
        if let Some((epoch, bits)) = reduce_slot(per_cpu, slot, agg, signed) {
            let value = if signed {
                Integer::Signed(bits as i64)
            } else {
                Integer::Unsigned(bits)
            };
            // As bpftrace's `std::map::emplace`: the first interval of an epoch stays.
            values.entry(epoch).or_insert(value);
        }
    }
    TseriesValue {
        interval_ns,
        intervals,
        values,
    }
}

/// Merges the per-CPU buffers into one buffer of the same layout whose
/// [`merge_value`] is that of all of them: each interval written holds its
/// merged value, a count of 1 and its epoch.
pub(crate) fn merge_into(agg: &Aggregation, per_cpu: &[&[u8]], out: &mut [u8]) {
    let Aggregation::Tseries {
        intervals,
        agg,
        signed,
        ..
    } = *agg
    else {
        return;
    };
    for slot in 0..intervals as usize {
        if let Some((epoch, value)) = reduce_slot(per_cpu, slot, agg, signed) {
            put_word(out, slot, VALUE, value);
            put_word(out, slot, META, 1);
            put_word(out, slot, EPOCH, epoch + 1);
        }
    }
}

/// The epochs a map's entries show: the last `intervals` up to the latest
/// epoch of any entry (`u64::MAX` for a map without entries), as
/// bpftrace's unsigned arithmetic computes them (an empty range when that
/// wraps).
pub(crate) fn shown_epochs(latest: Option<u64>, intervals: u32) -> (u64, u64) {
    let last = latest.unwrap_or(u64::MAX);
    let first = last.wrapping_sub(u64::from(intervals)).wrapping_add(1);
    (first, last)
}

/// One row of a graph: when its interval starts (ns since the epoch) and
/// its value, `None` where the interval has none.
pub(crate) type Point = (u64, Option<Integer>);

/// The rows an entry shows for the epochs `range`: from its first epoch
/// with a value in the range (the last epoch when none) to the end.
pub(crate) fn points(value: &TseriesValue, (first, last): (u64, u64)) -> Vec<Point> {
    let start = value
        .values
        .range(first..)
        .next()
        .map_or(last, |(e, _)| (*e).min(last));
    if first > last {
        return Vec::new();
    }
    (first.max(start)..=last)
        .map(|epoch| {
            (
                epoch.wrapping_mul(value.interval_ns),
                value.values.get(&epoch).copied(),
            )
        })
        .collect()
}

/// bpftrace's display unit of an interval: the digits after the seconds.
fn unit_digits(interval_ns: u64) -> (usize, &'static str) {
    match interval_ns {
        n if n >= 1_000_000_000 => (0, "s"),
        n if n >= 1_000_000 => (3, "ms"),
        n if n >= 1_000 => (6, "μs"),
        _ => (9, "ns"),
    }
}

/// The graph of `points`, as bpftrace's text output draws a time series
/// (`<no data>` without any row); `local_offset(secs)` is the local time's
/// offset from UTC, in seconds, at `secs` since the epoch.
pub(crate) fn text(points: &[Point], local_offset: &dyn Fn(i64) -> i64, out: &mut Vec<u8>) {
    const WIDTH: usize = 53;
    const PADDING: usize = 21;
    if points.is_empty() {
        out.extend_from_slice(b"<no data>");
        return;
    }
    let present = || points.iter().filter_map(|(_, v)| *v);
    let (Some(mut min), Some(mut max)) = (
        present().min_by_key(|v| v.sort_key()),
        present().max_by_key(|v| v.sort_key()),
    ) else {
        out.extend_from_slice(b"<no data>");
        return;
    };
    if min == max {
        // Room on both sides of a flat line, short of overflowing.
        min = step(min, -1);
        max = step(max, 1);
    }
    let (lo, hi) = (min.sort_key(), max.sort_key());
    let interval = (points[points.len() - 1].0 - points[0].0) / (points.len() as u64 - 1).max(1);
    let (digits, unit) = unit_digits(interval);
    let (time_fmt, time_size) = if digits == 0 {
        ("hh:mm:ss".to_string(), 8)
    } else {
        (format!("hh:mm:ss.{unit}"), 9 + digits)
    };
    let bounds = |out: &mut Vec<u8>| {
        let min_text = min.to_string();
        out.extend_from_slice(format!("{min_text:<PADDING$}").as_bytes());
        let max_text = max.to_string();
        out.extend_from_slice(format!("{max_text:>0$}", WIDTH - PADDING).as_bytes());
        out.push(b'\n');
    };
    out.extend_from_slice(" ".repeat(time_size + 1).as_bytes());
    bounds(out);
    // Padded in bytes, as C++'s setw pads ("μs" is two bytes).
    let pad = (time_size + 1).saturating_sub(time_fmt.len());
    out.extend_from_slice(time_fmt.as_bytes());
    out.extend_from_slice(" ".repeat(pad).as_bytes());
    out.push(b'|');
    out.extend_from_slice("_".repeat(WIDTH - 2).as_bytes());
    out.extend_from_slice(b"|\n");
    let zero_offset = if lo < 0 && hi > 0 {
        (WIDTH as f32 * (lo as f32) / ((lo - hi) as f32)) as usize
    } else {
        0
    };
    for (ns, value) in points {
        clock_time(*ns, digits, local_offset, out);
        out.push(b' ');
        let mut line = vec![b' '; WIDTH];
        line[0] = b'|';
        line[WIDTH - 1] = b'|';
        if zero_offset > 0 {
            line[zero_offset.min(WIDTH - 1)] = b'.';
        }
        match value {
            Some(v) => {
                let at =
                    ((WIDTH - 1) as f32 * ((v.sort_key() - lo) as f32) / ((hi - lo) as f32)) as i64;
                line[at.clamp(0, WIDTH as i64 - 1) as usize] = b'*';
                out.extend_from_slice(&line);
                out.push(b' ');
                out.extend_from_slice(v.to_string().as_bytes());
            }
            None => {
                out.extend_from_slice(&line);
                out.extend_from_slice(b" -");
            }
        }
        out.push(b'\n');
    }
    out.extend_from_slice(" ".repeat(time_size + 1).as_bytes());
    out.push(b'v');
    out.extend_from_slice("_".repeat(WIDTH - 2).as_bytes());
    out.extend_from_slice(b"v\n");
    out.extend_from_slice(" ".repeat(time_size + 1).as_bytes());
    bounds(out);
}

/// `v` moved by one, unless that overflows its type.
fn step(v: Integer, by: i8) -> Integer {
    match v {
        Integer::Signed(x) => Integer::Signed(x.checked_add(i64::from(by)).unwrap_or(x)),
        Integer::Unsigned(x) => Integer::Unsigned(if by < 0 {
            x.checked_sub(1).unwrap_or(x)
        } else {
            x.checked_add(1).unwrap_or(x)
        }),
    }
}

/// `HH:MM:SS` in local time, then `digits` digits of the second's fraction.
fn clock_time(ns: u64, digits: usize, local_offset: &dyn Fn(i64) -> i64, out: &mut Vec<u8>) {
    let secs = (ns / 1_000_000_000) as i64;
    let local = secs + local_offset(secs);
    let day_secs = local.rem_euclid(86_400);
    out.extend_from_slice(
        format!(
            "{:02}:{:02}:{:02}",
            day_secs / 3600,
            day_secs / 60 % 60,
            day_secs % 60
        )
        .as_bytes(),
    );
    if digits > 0 {
        let frac = ns % 1_000_000_000 / 10u64.pow(9 - digits as u32);
        out.extend_from_slice(format!(".{frac:0digits$}").as_bytes());
    }
}

/// `points` as bpftrace's JSON output lists them: rows without a value
/// left out, each start in UTC (`1970-01-01 00:00:00.500000000`).
pub(crate) fn json(points: &[Point], out: &mut Vec<u8>) {
    out.push(b'[');
    let mut first = true;
    for (ns, value) in points {
        let Some(value) = value else {
            continue;
        };
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(b"{\"interval_start\":\"");
        out.extend_from_slice(utc_time(*ns).as_bytes());
        out.extend_from_slice(b"\",\"value\":");
        out.extend_from_slice(value.to_string().as_bytes());
        out.push(b'}');
    }
    out.push(b']');
}

/// `YYYY-MM-DD HH:MM:SS.nnnnnnnnn` in UTC, as C++ prints a `sys_time`.
fn utc_time(ns: u64) -> String {
    let secs = (ns / 1_000_000_000) as i64;
    let (days, day_secs) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:09}",
        day_secs / 3600,
        day_secs / 60 % 60,
        day_secs % 60,
        ns % 1_000_000_000
    )
}

/// The proleptic Gregorian date of a day number (days since 1970-01-01),
/// by Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_cross_years_and_leap_days() {
        assert_eq!(utc_time(500_000_000), "1970-01-01 00:00:00.500000000");
        // 2024-02-29 12:34:56 UTC.
        assert_eq!(
            utc_time(1_709_210_096_000_000_007),
            "2024-02-29 12:34:56.000000007"
        );
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn avg_merges_the_cpus_of_the_latest_epoch_only() {
        let slot = |value: u64, meta: u64, epoch: u64| {
            let mut b = vec![0u8; TSERIES_SLOT as usize];
            put_word(&mut b, 0, VALUE, value);
            put_word(&mut b, 0, META, meta);
            put_word(&mut b, 0, EPOCH, epoch + 1);
            b
        };
        // Two CPUs at epoch 7 (sum 30 over 4 values), one stale at epoch 2.
        let cpus = [slot(10, 1, 7), slot(20, 3, 7), slot(99, 1, 2)];
        assert_eq!(reduce_slot(&cpus, 0, TseriesAgg::Avg, false), Some((7, 7)));
        assert_eq!(reduce_slot(&cpus, 0, TseriesAgg::Max, false), Some((7, 20)));
        // Last value: the one written last (meta is the time).
        assert_eq!(
            reduce_slot(&cpus, 0, TseriesAgg::Last, false),
            Some((7, 20))
        );
        // Written only at epoch 0: bpftrace's "unused" reads as 0 at epoch 0.
        assert_eq!(
            reduce_slot(&[slot(5, 0, 0)], 0, TseriesAgg::Last, false),
            Some((0, 0))
        );
        assert_eq!(
            reduce_slot(&[vec![0u8; 24]], 0, TseriesAgg::Last, false),
            None
        );
    }
}
