//! What a run costs, for `--stats` and the live status line: the probes'
//! run time as the kernel counts it (`BPF_ENABLE_STATS`), and weft's own
//! user and system CPU time (`getrusage`), both from the moment the probes
//! were attached.

use std::time::Instant;

use output::stats::{ProbeStats, RunStats};
use runtime::Session;

pub use runtime::usage::{online_cpus, own_cpu_ns};

/// Where the costs of a run start from.
#[derive(Clone, Copy, Debug)]
pub struct Baseline {
    at: Instant,
    user_ns: u64,
    system_ns: u64,
}

impl Baseline {
    /// Now: taken once the probes are attached.
    pub fn now() -> Baseline {
        let (user_ns, system_ns) = own_cpu_ns();
        Baseline {
            at: Instant::now(),
            user_ns,
            system_ns,
        }
    }

    /// The run's cost from this baseline to now. `probes` are every
    /// program's statistics, empty when they cannot be read.
    pub fn stats(&self, session: &Session) -> RunStats {
        let (user, system) = own_cpu_ns();
        let manifest = session.manifest();
        let probes = session
            .program_stats()
            .unwrap_or_default()
            .into_iter()
            .map(|s| ProbeStats {
                probe: manifest
                    .programs
                    .iter()
                    .find(|p| p.name == s.name)
                    .map_or_else(|| s.name.clone(), |p| p.probe.clone()),
                program: s.name,
                id: s.id,
                run_count: s.run_count,
                run_time_ns: s.run_time_ns,
                recursion_misses: s.recursion_misses,
            })
            .collect();
        RunStats {
            elapsed_ns: self.at.elapsed().as_nanos() as u64,
            cpus: online_cpus(),
            probes,
            weft_user_ns: user.saturating_sub(self.user_ns),
            weft_system_ns: system.saturating_sub(self.system_ns),
        }
    }
}
