//! The interface between the runtime's event loop and an output format.

use std::io;

use crate::flat::FlatMap;
use crate::stream::StreamRecord;
use crate::value::{MapDump, Value};

/// What an `errorf()`/`warnf()` message is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One output format. Methods write whole messages; callers buffer the
/// underlying writer and flush when they wait for events.
pub trait Sink {
    /// `Attached N probes` once every probe is attached.
    fn attached_probes(&mut self, count: u64) -> io::Result<()>;
    /// Events dropped because the ring buffer was full.
    fn lost_events(&mut self, count: u64) -> io::Result<()>;
    /// The rendered text of one `printf()` (see [`crate::printf::Format::render`]).
    fn printf(&mut self, text: &[u8]) -> io::Result<()>;
    /// What the command of one `system()` wrote to its stdout: printed as it
    /// is (JSON: bpftrace's `syscall` record).
    fn system(&mut self, output: &[u8]) -> io::Result<()> {
        self.printf(output)
    }
    /// The text of one `errorf()` (`severity` Error) or `warnf()`, and where
    /// the call is (`origin`: the call, then each macro use it came through).
    fn source_message(
        &mut self,
        severity: Severity,
        text: &[u8],
        origin: &[abi::SourcePlace],
    ) -> io::Result<()>;
    /// A warning about the program's own run (a division by zero) and where
    /// in the script it happened. By default as a `warnf()`.
    fn runtime_warning(&mut self, text: &[u8], origin: &[abi::SourcePlace]) -> io::Result<()> {
        self.source_message(Severity::Warning, text, origin)
    }
    /// The contents of the file one `cat()` names (empty when it cannot be read).
    fn cat(&mut self, text: &[u8]) -> io::Result<()>;
    /// The `strftime` output of one `time()` call, formatted by the caller.
    fn time(&mut self, text: &[u8]) -> io::Result<()>;
    /// The joined text of one `join()` call, without the newline.
    fn join(&mut self, text: &[u8]) -> io::Result<()>;
    /// `print(value)` of a non-map value.
    fn value(&mut self, value: &Value) -> io::Result<()>;
    /// `print(@m, top, div)`; `top == 0` shows all entries, `div == 0` means 1.
    fn map(&mut self, map: &MapDump, top: u64, div: u64) -> io::Result<()>;
    /// [`Sink::map`] of a map decoded entry by entry; the same bytes as
    /// `self.map(&map.to_dump(), top, div)`, which is what this default does.
    fn flat_map(&mut self, map: &mut FlatMap<'_>, top: u64, div: u64) -> io::Result<()> {
        let dump = map.to_dump();
        self.map(&dump, top, div)
    }
    /// One ended (or expired, when incomplete) instance of a `stream`.
    fn stream_record(&mut self, record: &StreamRecord<'_>) -> io::Result<()>;
    /// `--stats` at exit: a record in formats that carry one (JSON); the
    /// text table goes to stderr, not here.
    fn run_stats(&mut self, _stats: &crate::stats::RunStats) -> io::Result<()> {
        Ok(())
    }
    /// Whether [`Sink::run_stats`] writes the stats (else weft prints its
    /// table on stderr).
    fn carries_stats(&self) -> bool {
        false
    }
    /// One `bench:` probe's result under `--mode bench`: `names` are every
    /// benchmark of the run (the text table is as wide as the longest),
    /// `index` this one's. Text writes the table's header before the first.
    fn benchmark(
        &mut self,
        names: &[String],
        index: usize,
        mean_ns: u64,
        iters: u64,
    ) -> io::Result<()> {
        self.printf(benchmark_text(names, index, mean_ns, iters).as_bytes())
    }
    /// A `send_ustack()` record (see `abi::stack::UserStackCopy`), for a
    /// sink that unwinds user stacks (the profiles'); others ignore it.
    fn user_stack(&mut self, _record: &[u8]) -> io::Result<()> {
        Ok(())
    }
    /// What bpftrace writes before printing the maps at exit.
    fn exit_separator(&mut self) -> io::Result<()>;
    fn flush(&mut self) -> io::Result<()>;
}

/// The end-of-run dump: what the format writes at the end of the run (two
/// newlines in text), then every map in name order (bpftrace keeps its maps
/// in a name-sorted `std::map`); empty maps print nothing.
pub fn print_maps_at_exit(sink: &mut dyn Sink, maps: &[MapDump]) -> io::Result<()> {
    sink.exit_separator()?;
    let mut ordered: Vec<&MapDump> = maps.iter().collect();
    ordered.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    for map in ordered {
        sink.map(map, 0, 0)?;
    }
    sink.flush()
}

/// The text lines of one benchmark result, as bpftrace's table has them: a
/// name column at least 41 wide, `Time(ns)` 15 wide, then `Iterations`;
/// the header and a rule of dashes before the first result.
pub fn benchmark_text(names: &[String], index: usize, mean_ns: u64, iters: u64) -> String {
    const TIME_WIDTH: usize = 15;
    let name_width = names.iter().map(String::len).max().unwrap_or(0).max(40) + 1;
    let mut out = String::new();
    if index == 0 {
        out.push_str(&format!(
            "{:<name_width$}{:<TIME_WIDTH$}Iterations\n",
            "Benchmark", "Time(ns)"
        ));
        out.push_str(&"-".repeat(name_width + TIME_WIDTH + "Iterations".len()));
        out.push('\n');
    }
    let name = names.get(index).map(String::as_str).unwrap_or("");
    out.push_str(&format!(
        "{name:<name_width$}{mean_ns:<TIME_WIDTH$}{iters}\n"
    ));
    out
}

#[cfg(test)]
mod benchmark_tests {
    use super::benchmark_text;

    #[test]
    fn the_table_is_bpftraces() {
        let names = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            benchmark_text(&names, 0, 12, 400),
            format!(
                "Benchmark{}Time(ns){}Iterations\n{}\na{}12{}400\n",
                " ".repeat(32),
                " ".repeat(7),
                "-".repeat(66),
                " ".repeat(40),
                " ".repeat(13)
            )
        );
        assert_eq!(
            benchmark_text(&names, 1, 5, 8),
            format!("b{}5{}8\n", " ".repeat(40), " ".repeat(14))
        );
        let long = vec!["x".repeat(50)];
        assert!(
            benchmark_text(&long, 0, 1, 1).starts_with(&format!("Benchmark{}Time", " ".repeat(42)))
        );
    }
}
