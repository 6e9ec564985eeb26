//! `--stats`: what the probes and weft itself cost over a run, as a table
//! for stderr and a JSON `stats` record.
//!
//! The probes' numbers are the kernel's BPF run statistics (`run_cnt`,
//! `run_time_ns`, `recursion_misses` of each program, what `bpftool prog
//! show` prints as `run_cnt` and `run_time_ns`); weft's are its own user and
//! system CPU time over the run. The overhead is both, as a share of all
//! the machine's CPU time over the run.

use std::io::{self, Write};

/// One program's run statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeStats {
    /// The probe as written, expanded (`tracepoint:syscalls:sys_enter_read`).
    pub probe: String,
    /// Its program's name (what bpftool shows).
    pub program: String,
    /// The kernel's id of the program (`bpftool prog show id N`).
    pub id: u32,
    pub run_count: u64,
    pub run_time_ns: u64,
    /// Runs skipped because the program was already running on that CPU
    /// (a probe fired from inside a probe): events not seen.
    pub recursion_misses: u64,
}

impl ProbeStats {
    /// Mean run time in nanoseconds (0 before the first run).
    pub fn mean_ns(&self) -> u64 {
        self.run_time_ns.checked_div(self.run_count).unwrap_or(0)
    }
}

/// The cost of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunStats {
    /// From attaching to detaching.
    pub elapsed_ns: u64,
    /// CPUs online: the machine's CPU time is `elapsed_ns * cpus`.
    pub cpus: u32,
    pub probes: Vec<ProbeStats>,
    /// weft's own CPU time over the run.
    pub weft_user_ns: u64,
    pub weft_system_ns: u64,
}

impl RunStats {
    /// Time spent running every probe.
    pub fn probes_ns(&self) -> u64 {
        self.probes.iter().map(|p| p.run_time_ns).sum()
    }

    /// Probes and weft, as a percentage of the machine's CPU time over the run.
    pub fn overhead_percent(&self) -> f64 {
        let machine = self.elapsed_ns as f64 * f64::from(self.cpus.max(1));
        if machine <= 0.0 {
            return 0.0;
        }
        (self.probes_ns() + self.weft_user_ns + self.weft_system_ns) as f64 * 100.0 / machine
    }

    /// The probes' share alone (what tracing costs the traced tasks).
    pub fn probes_percent(&self) -> f64 {
        let machine = self.elapsed_ns as f64 * f64::from(self.cpus.max(1));
        if machine <= 0.0 {
            return 0.0;
        }
        self.probes_ns() as f64 * 100.0 / machine
    }
}

/// A duration for people: `850 ns`, `12.3 us`, `4.56 ms`, `1.23 s`.
pub fn human_ns(ns: u64) -> String {
    let v = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} us", v / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", v / 1e6)
    } else {
        format!("{:.2} s", v / 1e9)
    }
}

/// The table weft prints on stderr at exit.
pub fn write_stats_text(out: &mut dyn Write, stats: &RunStats) -> io::Result<()> {
    writeln!(
        out,
        "weft: --stats over {} (BPF run statistics, as bpftool prog show counts them):",
        human_ns(stats.elapsed_ns)
    )?;
    let width = stats
        .probes
        .iter()
        .map(|p| p.probe.len())
        .max()
        .unwrap_or(0)
        .max(5);
    writeln!(
        out,
        "  {:<width$}  {:>8}  {:>12}  {:>10}  {:>10}  {:>9}",
        "probe", "prog id", "runs", "run time", "mean", "recursion"
    )?;
    for p in &stats.probes {
        writeln!(
            out,
            "  {:<width$}  {:>8}  {:>12}  {:>10}  {:>10}  {:>9}",
            p.probe,
            p.id,
            p.run_count,
            human_ns(p.run_time_ns),
            human_ns(p.mean_ns()),
            p.recursion_misses
        )?;
    }
    writeln!(
        out,
        "weft: probes ran {} ({:.3}% of {} CPUs); weft itself used {} CPU ({} user, {} system); overhead {:.3}% of the machine's CPU",
        human_ns(stats.probes_ns()),
        stats.probes_percent(),
        stats.cpus,
        human_ns(stats.weft_user_ns + stats.weft_system_ns),
        human_ns(stats.weft_user_ns),
        human_ns(stats.weft_system_ns),
        stats.overhead_percent()
    )
}

/// The JSON `stats` record (one line).
pub fn write_stats_json(out: &mut dyn Write, stats: &RunStats) -> io::Result<()> {
    write!(
        out,
        "{{\"type\": \"stats\", \"data\": {{\"elapsed_ns\": {}, \"cpus\": {}, \"probes\": [",
        stats.elapsed_ns, stats.cpus
    )?;
    for (i, p) in stats.probes.iter().enumerate() {
        if i > 0 {
            out.write_all(b", ")?;
        }
        out.write_all(b"{\"probe\": \"")?;
        out.write_all(&crate::json::escape(p.probe.as_bytes()))?;
        out.write_all(b"\", \"program\": \"")?;
        out.write_all(&crate::json::escape(p.program.as_bytes()))?;
        out.write_all(b"\"")?;
        write!(
            out,
            ", \"id\": {}, \"run_count\": {}, \"run_time_ns\": {}, \"mean_ns\": {}, \"recursion_misses\": {}}}",
            p.id,
            p.run_count,
            p.run_time_ns,
            p.mean_ns(),
            p.recursion_misses
        )?;
    }
    writeln!(
        out,
        "], \"probes_ns\": {}, \"weft_user_ns\": {}, \"weft_system_ns\": {}, \"overhead_percent\": {:.4}}}}}",
        stats.probes_ns(),
        stats.weft_user_ns,
        stats.weft_system_ns,
        stats.overhead_percent()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> RunStats {
        RunStats {
            elapsed_ns: 2_000_000_000,
            cpus: 2,
            probes: vec![ProbeStats {
                probe: "tracepoint:syscalls:sys_enter_getppid".into(),
                program: "sys_enter_getppid".into(),
                id: 42,
                run_count: 1000,
                run_time_ns: 190_000,
                recursion_misses: 0,
            }],
            weft_user_ns: 3_000_000,
            weft_system_ns: 1_000_000,
        }
    }

    #[test]
    fn overhead_is_a_share_of_all_cpus() {
        let s = stats();
        assert_eq!(s.probes_ns(), 190_000);
        assert_eq!(s.probes[0].mean_ns(), 190);
        // (0.19 + 4) ms of 4 s of CPU.
        assert!((s.overhead_percent() - 0.10475).abs() < 1e-9);
        assert!((s.probes_percent() - 0.00475).abs() < 1e-9);
        let idle = RunStats {
            probes: vec![],
            elapsed_ns: 0,
            ..s
        };
        assert_eq!(idle.overhead_percent(), 0.0);
    }

    #[test]
    fn text_and_json() {
        let mut text = Vec::new();
        write_stats_text(&mut text, &stats()).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("tracepoint:syscalls:sys_enter_getppid        42          1000    190.0 us      190 ns          0"), "{text}");
        assert!(text.ends_with("weft: probes ran 190.0 us (0.005% of 2 CPUs); weft itself used 4.00 ms CPU (3.00 ms user, 1.00 ms system); overhead 0.105% of the machine's CPU\n"), "{text}");
        let mut json = Vec::new();
        write_stats_json(&mut json, &stats()).unwrap();
        assert_eq!(
            String::from_utf8(json).unwrap(),
            "{\"type\": \"stats\", \"data\": {\"elapsed_ns\": 2000000000, \"cpus\": 2, \"probes\": [{\"probe\": \"tracepoint:syscalls:sys_enter_getppid\", \"program\": \"sys_enter_getppid\", \"id\": 42, \"run_count\": 1000, \"run_time_ns\": 190000, \"mean_ns\": 190, \"recursion_misses\": 0}], \"probes_ns\": 190000, \"weft_user_ns\": 3000000, \"weft_system_ns\": 1000000, \"overhead_percent\": 0.1047}}\n"
        );
    }

    #[test]
    fn durations_for_people() {
        assert_eq!(human_ns(850), "850 ns");
        assert_eq!(human_ns(12_345), "12.3 us");
        assert_eq!(human_ns(4_560_000), "4.56 ms");
        assert_eq!(human_ns(1_234_000_000), "1.23 s");
    }
}
