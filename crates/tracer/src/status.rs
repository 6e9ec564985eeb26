//! The live status line: on a terminal (stderr), unless `-q`, one line
//! redrawn about once a second while the probes are attached: elapsed
//! time, events per second, events and map updates lost so far, the
//! fullest map, stream instances open, and the overhead.
//!
//! It never splits a line of output: the line is drawn only when the
//! output written so far ends with a newline, and when stdout is the same
//! terminal, any output erases it first ([`StatusWriter`] wraps stdout);
//! it comes back at the next redraw. Everything else weft writes to stderr
//! during a run goes through [`StatusLine::clear`] first.

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use abi::{CounterIndex, Manifest};
use runtime::Session;

/// How often the line is redrawn.
const REDRAW: Duration = Duration::from_secs(1);

/// Moves to the start of the line and clears it.
const ERASE: &[u8] = b"\r\x1b[K";

/// A status line is on the screen (for writers that do not hold it).
static SHOWN: AtomicBool = AtomicBool::new(false);

/// Takes the status line off the screen, if one is there, before a message
/// goes to stderr; the next redraw brings it back.
pub fn clear_for_stderr() {
    if SHOWN.swap(false, Ordering::Relaxed) {
        let mut err = io::stderr().lock();
        let _ = err.write_all(ERASE);
        let _ = err.flush();
    }
}

/// stderr for the messages the text output writes there (`Attached N
/// probes`, `Lost N events`), taking the status line off the screen first.
pub struct MessagesToStderr;

impl Write for MessagesToStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        clear_for_stderr();
        io::stderr().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

/// What the line and the output writer share.
#[derive(Debug)]
struct Shared {
    /// The line is on the screen now.
    shown: bool,
    /// The output written so far ends with a newline (or nothing was written).
    at_line_start: bool,
    /// Output goes to the same terminal: writing it must erase the line first.
    erase_on_output: bool,
}

/// Wraps stdout: erases the status line before output when both share the
/// terminal, and notes whether output stopped mid-line.
pub struct StatusWriter<W: Write> {
    inner: W,
    shared: Rc<RefCell<Shared>>,
}

impl<W: Write> Write for StatusWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        {
            let mut s = self.shared.borrow_mut();
            if s.shown && s.erase_on_output {
                let mut err = io::stderr().lock();
                let _ = err.write_all(ERASE);
                let _ = err.flush();
                s.shown = false;
                SHOWN.store(false, Ordering::Relaxed);
            }
        }
        let n = self.inner.write(buf)?;
        if n > 0 {
            self.shared.borrow_mut().at_line_start = buf[n - 1] == b'\n';
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The terminal's width in columns (80 when it cannot be asked).
fn columns() -> usize {
    runtime::host::terminal_columns().unwrap_or(80)
}

/// Map fullness is counted key by key: no more often than this many times
/// the time the last count took, so the line costs little on big maps.
const COUNT_COST_FACTOR: u32 = 50;

/// The status line and what it remembers between redraws.
pub struct StatusLine {
    shared: Rc<RefCell<Shared>>,
    started: Instant,
    baseline: crate::overhead::Baseline,
    stats: bool,
    last_draw: Option<Instant>,
    last_records: u64,
    /// The fullest map as last counted: (name, entries, capacity), and
    /// stream instances open.
    fullest: Option<(String, usize, u32)>,
    open_instances: Option<usize>,
    next_count: Instant,
}

impl StatusLine {
    /// A status line for stderr (`stats`: the kernel counts run time, so
    /// the overhead includes the probes'), and the writer to wrap the
    /// output in (`to_stdout`: the output is stdout, not a file).
    pub fn new<W: Write>(out: W, stats: bool, to_stdout: bool) -> (StatusLine, StatusWriter<W>) {
        let shared = Rc::new(RefCell::new(Shared {
            shown: false,
            at_line_start: true,
            erase_on_output: to_stdout && io::IsTerminal::is_terminal(&io::stdout()),
        }));
        let line = StatusLine {
            shared: Rc::clone(&shared),
            started: Instant::now(),
            baseline: crate::overhead::Baseline::now(),
            stats,
            last_draw: None,
            last_records: 0,
            fullest: None,
            open_instances: None,
            next_count: Instant::now(),
        };
        (line, StatusWriter { inner: out, shared })
    }

    /// The probes are attached: time starts now.
    pub fn start(&mut self) {
        self.started = Instant::now();
        self.baseline = crate::overhead::Baseline::now();
        self.last_draw = Some(self.started);
    }

    /// Takes the line off the screen (before other stderr output, and at the end).
    pub fn clear(&mut self) {
        let mut s = self.shared.borrow_mut();
        SHOWN.store(false, Ordering::Relaxed);
        if s.shown {
            let mut err = io::stderr().lock();
            let _ = err.write_all(ERASE);
            let _ = err.flush();
            s.shown = false;
        }
    }

    /// Redraws the line when a second has passed and output is at a line
    /// start; `records`: ring-buffer records received so far. The events
    /// counted are those records, or with `--stats` every run of a probe.
    pub fn tick(&mut self, session: &Session, records: u64) {
        let now = Instant::now();
        let due = self
            .last_draw
            .is_none_or(|t| now.duration_since(t) >= REDRAW);
        if !due || !self.shared.borrow().at_line_start {
            return;
        }
        let dt = self
            .last_draw
            .map_or(Duration::ZERO, |t| now.duration_since(t))
            .as_secs_f64();
        let run = self.baseline.stats(session);
        let events = if self.stats {
            run.probes.iter().map(|p| p.run_count).sum()
        } else {
            records
        };
        let rate = if dt > 0.0 {
            events.saturating_sub(self.last_records) as f64 / dt
        } else {
            0.0
        };
        self.last_draw = Some(now);
        self.last_records = events;
        if now >= self.next_count {
            let began = Instant::now();
            self.fullest = fullest_map(session, session.manifest());
            self.open_instances = open_instances(session, session.manifest());
            self.next_count = Instant::now() + began.elapsed() * COUNT_COST_FACTOR;
        }
        let counters = session.counters().ok();
        let text = self.render(&run, rate, counters.as_ref());
        let mut text = text.into_bytes();
        text.truncate(columns().saturating_sub(1));
        let mut err = io::stderr().lock();
        let _ = err.write_all(ERASE);
        let _ = err.write_all(&text);
        let _ = err.flush();
        self.shared.borrow_mut().shown = true;
        SHOWN.store(true, Ordering::Relaxed);
    }

    fn render(
        &self,
        run: &output::stats::RunStats,
        rate: f64,
        counters: Option<&[u64; CounterIndex::COUNT as usize]>,
    ) -> String {
        let mut parts = vec![
            format!("weft {}", elapsed(self.started.elapsed())),
            if self.stats {
                format!("{} probe runs/s", si(rate))
            } else {
                format!("{} events/s", si(rate))
            },
        ];
        if let Some(c) = counters {
            parts.push(format!(
                "lost {} events, {} map updates",
                c[CounterIndex::RingbufFull as usize],
                c[CounterIndex::MapFull as usize]
            ));
        }
        if let Some((name, n, cap)) = &self.fullest {
            parts.push(format!("fullest {name} {n}/{cap}"));
        }
        if let Some(n) = self.open_instances {
            parts.push(format!("{n} stream instances open"));
        }
        let overhead = if self.stats {
            format!("overhead {:.2}%", run.overhead_percent())
        } else {
            let own = (run.weft_user_ns + run.weft_system_ns) as f64 * 100.0
                / (run.elapsed_ns.max(1) as f64 * f64::from(run.cpus));
            format!("weft CPU {own:.2}% (--stats for the probes')")
        };
        parts.push(overhead);
        parts.join(" | ")
    }
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The script map with the most keys for its size: (name, keys, capacity).
fn fullest_map(session: &Session, manifest: &Manifest) -> Option<(String, usize, u32)> {
    manifest
        .maps
        .iter()
        .filter(|m| m.key.is_some())
        .filter_map(|m| {
            let n = session.map_len(&m.bpf_name).ok()?;
            Some((m.name.clone(), n, m.max_entries))
        })
        .max_by(|a, b| {
            let fa = a.1 as f64 / f64::from(a.2.max(1));
            let fb = b.1 as f64 / f64::from(b.2.max(1));
            fa.total_cmp(&fb)
        })
}

/// Stream instances begun and not ended yet, over every stream.
fn open_instances(session: &Session, manifest: &Manifest) -> Option<usize> {
    if manifest.streams.is_empty() {
        return None;
    }
    Some(
        manifest
            .streams
            .iter()
            .filter_map(|s| session.map_len(&s.state_map).ok())
            .sum(),
    )
}

/// `12s`, `3m04s`, `1h02m`.
fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `950`, `1.2k`, `3.4M`.
fn si(v: f64) -> String {
    if v < 1_000.0 {
        format!("{v:.0}")
    } else if v < 1_000_000.0 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{:.1}M", v / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_a_glance() {
        assert_eq!(elapsed(Duration::from_secs(12)), "12s");
        assert_eq!(elapsed(Duration::from_secs(184)), "3m04s");
        assert_eq!(elapsed(Duration::from_secs(3720)), "1h02m");
        assert_eq!(si(950.4), "950");
        assert_eq!(si(1234.0), "1.2k");
        assert_eq!(si(3_400_000.0), "3.4M");
    }

    #[test]
    fn the_writer_tracks_line_starts() {
        let (line, mut w) = StatusLine::new(Vec::new(), false, true);
        w.write_all(b"abc").unwrap();
        assert!(!line.shared.borrow().at_line_start);
        w.write_all(b"def\n").unwrap();
        assert!(line.shared.borrow().at_line_start);
        assert_eq!(w.inner, b"abcdef\n");
    }
}
