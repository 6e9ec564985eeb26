//! `software:EVENT[:COUNT]` (alias `s`): a kernel software perf event
//! (`PERF_TYPE_SOFTWARE`) sampled every COUNT occurrences on every CPU, with
//! bpftrace's names, aliases and default counts.

use source::Diagnostic;

use super::perf_event::{self, Event, ev};
use super::{AttachPointRef, Needs, ProviderDef, ResolvedProbe};

pub const DEF: ProviderDef = ProviderDef {
    name: "software",
    aliases: &["s"],
    usage: "software:EVENT[:COUNT]",
    help: "a kernel software event (page-faults, context-switches, ...) sampled on every CPU",
    resolve: |ap, _, _| resolve(ap).map(|p| vec![p]),
    list: Some(|q, kernel| perf_event::list_table(q, kernel, EVENTS)),
    listed_by: super::Listed::Kernel,
    pid_filter: true,
    needs: Needs::PerfSoftware,
};

/// `PERF_TYPE_SOFTWARE`.
const PERF_TYPE_SOFTWARE: u32 = 1;

/// `enum perf_sw_ids`, with bpftrace's default counts.
pub const EVENTS: &[Event] = &[
    ev("cpu-clock", "cpu", 1_000_000, 0),
    ev("task-clock", "", 1_000_000, 1),
    ev("page-faults", "faults", 100, 2),
    ev("context-switches", "cs", 1_000, 3),
    ev("cpu-migrations", "", 1, 4),
    ev("minor-faults", "", 100, 5),
    ev("major-faults", "", 1, 6),
    ev("alignment-faults", "", 1, 7),
    ev("emulation-faults", "", 1, 8),
    ev("dummy", "", 1, 9),
    ev("bpf-output", "", 1, 10),
];

pub fn resolve(ap: &AttachPointRef<'_>) -> Result<ResolvedProbe, Diagnostic> {
    perf_event::resolve(ap, DEF.name, PERF_TYPE_SOFTWARE, EVENTS)
}
