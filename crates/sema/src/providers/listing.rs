//! `-l FILE` and `-l -e PROGRAM`: the probes a program would attach, as
//! bpftrace's current release lists them. Each attach point is resolved
//! (wildcards expanded, `-p PID` applied) and printed in its provider's
//! listing form: a timer or perf event without its rate or count
//! (`interval:ms:`, `software:cpu:`), every other probe by its full name.
//! BEGIN, END, `self`, `bench` and stream handlers attach to nothing and
//! are left out. Each attach point's probes come sorted, in the program's
//! order of attach points.

use ktypes::KernelInfo;
use source::Diagnostics;
use syntax::ast::{AttachPoint, Item, Program};

use super::{AttachPointRef, ResolvedProbe, provider_def, resolve_for};

/// The lines `-l` prints for `program`, and what stopped an attach point
/// from resolving.
pub fn list_program(
    program: &Program,
    kernel: &dyn KernelInfo,
    pid: Option<u32>,
) -> (Vec<String>, Diagnostics) {
    let mut lines = Vec::new();
    let mut diags = Diagnostics::new();
    let attach_points = program.items.iter().flat_map(|item| -> Vec<&AttachPoint> {
        match item {
            Item::Probe(p) => p.attach_points.iter().collect(),
            Item::Stream(s) => s.stages.iter().flat_map(|st| &st.attach_points).collect(),
            _ => Vec::new(),
        }
    });
    for ap in attach_points {
        let canonical = provider_def(&ap.provider).map(|d| d.name);
        if matches!(canonical, Some("BEGIN" | "END" | "self" | "bench")) || ap.provider == "stream"
        {
            continue;
        }
        let r = AttachPointRef {
            raw: &ap.raw,
            provider: &ap.provider,
            parts: &ap.parts,
            span: ap.span,
            unchecked: false,
        };
        match resolve_for(&r, kernel, pid) {
            Ok(probes) => {
                let mut names: Vec<String> = probes.iter().map(listed_name).collect();
                names.sort();
                names.dedup();
                lines.extend(names);
            }
            Err(d) => diags.push(d),
        }
    }
    (lines, diags)
}

/// How `-l` names a resolved probe: timers and perf events by provider and
/// unit or event (`interval:ms:`, `hardware:cache-misses:`), the rest in full.
fn listed_name(p: &ResolvedProbe) -> String {
    match p.attach {
        abi::Attach::Interval { .. } | abi::Attach::PerfEvent { .. } => {
            let mut parts = p.name.splitn(3, ':');
            let provider = parts.next().unwrap_or("");
            let what = parts.next().unwrap_or("");
            format!("{provider}:{what}:")
        }
        _ => p.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(text: &str) -> Vec<String> {
        let (program, diags) = syntax::parse_text(text, 0);
        assert!(!diags.has_errors(), "{diags:?}");
        let kernel = ktypes::FixtureKernel::typical();
        let (lines, diags) = list_program(&program, &kernel, None);
        assert!(!diags.has_errors(), "{diags:?}");
        lines
    }

    #[test]
    fn timers_and_events_without_their_rates() {
        assert_eq!(
            listed(
                "interval:ms:1000 {} interval:s:1 {} interval:us:100000 {} BEGIN {} software:cpu:1e6 {}"
            ),
            [
                "interval:ms:",
                "interval:s:",
                "interval:us:",
                "software:cpu:"
            ]
        );
    }

    #[test]
    fn wildcards_expand_sorted_in_program_order() {
        assert_eq!(
            listed("tracepoint:syscalls:sys_exit_read, tracepoint:syscalls:sys_*_read { } END { }"),
            [
                "tracepoint:syscalls:sys_exit_read",
                "tracepoint:syscalls:sys_enter_read",
                "tracepoint:syscalls:sys_exit_read",
            ]
        );
    }
}
