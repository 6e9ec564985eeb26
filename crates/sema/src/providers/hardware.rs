//! `hardware:EVENT[:COUNT]` (alias `h`): a CPU PMU counter
//! (`PERF_TYPE_HARDWARE`) sampled every COUNT events on every CPU. Whether
//! the machine has a PMU is decided at run time: without one, attaching
//! fails with one sentence that says so.

use source::Diagnostic;

use super::perf_event::{self, Event, ev};
use super::{AttachPointRef, Needs, ProviderDef, ResolvedProbe};

pub const DEF: ProviderDef = ProviderDef {
    name: "hardware",
    aliases: &["h"],
    usage: "hardware:EVENT[:COUNT]",
    help: "a CPU PMU counter (cycles, instructions, ...) sampled on every CPU",
    resolve: |ap, _, _| resolve(ap).map(|p| vec![p]),
    list: Some(|q, kernel| perf_event::list_table(q, kernel, EVENTS)),
    listed_by: super::Listed::Kernel,
    pid_filter: true,
    needs: Needs::HardwarePmu,
};

/// `PERF_TYPE_HARDWARE`.
const PERF_TYPE_HARDWARE: u32 = 0;

/// `enum perf_hw_id`, with bpftrace's default counts.
pub const EVENTS: &[Event] = &[
    ev("cpu-cycles", "cycles", 1_000_000, 0),
    ev("instructions", "", 1_000_000, 1),
    ev("cache-references", "", 1_000_000, 2),
    ev("cache-misses", "", 1_000_000, 3),
    ev("branch-instructions", "branches", 100_000, 4),
    ev("branch-misses", "", 100_000, 5),
    ev("bus-cycles", "", 100_000, 6),
    ev("frontend-stalls", "", 1_000_000, 7),
    ev("backend-stalls", "", 1_000_000, 8),
    ev("ref-cycles", "", 1_000_000, 9),
];

pub fn resolve(ap: &AttachPointRef<'_>) -> Result<ResolvedProbe, Diagnostic> {
    perf_event::resolve(ap, DEF.name, PERF_TYPE_HARDWARE, EVENTS)
}
