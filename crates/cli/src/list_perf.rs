//! `-l` for perf-event probes and the timed providers:
//!
//! - `software:PATTERN` / `hardware:PATTERN` print one line per event whose
//!   name (or alias) matches, in bpftrace 0.17's form `software:NAME:`
//!   (the count that may follow is left out). bpftrace echoes a wildcard
//!   pattern as it is (`software:*:`); weft lists the events it stands for.
//! - `profile` and `interval` have no names to list (a probe is a unit and a
//!   rate): bpftrace 0.17 refuses them with an error, and so does weft, with
//!   one sentence saying how to write one.
//! - A pattern without a provider (bare `-l`) lists hardware and software
//!   events next to the tracepoints, sorted, as bpftrace does.

use sema::providers::{glob_match, perf_events};

/// The lines `-l PROVIDER:PATTERN` prints for `software` or `hardware`.
pub fn lines(hardware: bool, pattern: &str) -> Vec<String> {
    let provider = if hardware { "hardware" } else { "software" };
    // `software:cpu-clock:1000` lists `software:cpu-clock:`.
    let name = pattern.split(':').next().unwrap_or("");
    let name = if name.is_empty() { "*" } else { name };
    perf_events(hardware)
        .into_iter()
        .filter_map(|(event, alias)| {
            if glob_match(name, event) {
                Some(event)
            } else if !alias.is_empty() && glob_match(name, alias) {
                Some(alias)
            } else {
                None
            }
        })
        .map(|shown| format!("{provider}:{shown}:"))
        .collect()
}

/// The sentence `-l 'profile:*'` or `-l 'interval:*'` fails with.
pub fn timed_provider_error(provider: &str) -> String {
    format!(
        "weft: {provider} probes have no names to list: write {provider}:UNIT:RATE, e.g. {provider}:hz:99 or {provider}:ms:100"
    )
}

/// The perf-event lines a pattern without a provider matches (`*` for bare `-l`).
pub fn unqualified(pattern: &str) -> Vec<String> {
    let mut out = lines(true, pattern);
    out.extend(lines(false, pattern));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from bpftrace 0.17 on this machine (`bpftrace -l PATTERN`).
    const BPFTRACE_SOFTWARE_CPU_CLOCK: &str = "software:cpu-clock:\n";
    const BPFTRACE_SOFTWARE_CPU: &str = "software:cpu:\n";

    fn text(lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn an_exact_name_prints_as_bpftrace_does() {
        assert_eq!(
            text(&lines(false, "cpu-clock")),
            BPFTRACE_SOFTWARE_CPU_CLOCK
        );
        // An alias prints as written.
        assert_eq!(text(&lines(false, "cpu")), BPFTRACE_SOFTWARE_CPU);
        // A count after the name is not part of what is listed.
        assert_eq!(
            text(&lines(false, "cpu-clock:1000")),
            BPFTRACE_SOFTWARE_CPU_CLOCK
        );
    }

    #[test]
    fn wildcards_list_every_matching_event() {
        assert_eq!(
            lines(false, "*"),
            [
                "software:cpu-clock:",
                "software:task-clock:",
                "software:page-faults:",
                "software:context-switches:",
                "software:cpu-migrations:",
                "software:minor-faults:",
                "software:major-faults:",
                "software:alignment-faults:",
                "software:emulation-faults:",
                "software:dummy:",
                "software:bpf-output:",
            ]
        );
        assert_eq!(
            lines(true, "*cycles"),
            [
                "hardware:cpu-cycles:",
                "hardware:bus-cycles:",
                "hardware:ref-cycles:"
            ]
        );
        assert_eq!(
            lines(false, "*fault*"),
            [
                "software:page-faults:",
                "software:minor-faults:",
                "software:major-faults:",
                "software:alignment-faults:",
                "software:emulation-faults:",
            ]
        );
        assert_eq!(lines(true, "*").len(), 10);
        assert!(lines(true, "no-such-event").is_empty());
    }

    #[test]
    fn bare_listing_holds_both_providers() {
        let all = unqualified("*");
        assert_eq!(all.len(), 21);
        assert_eq!(all[0], "hardware:cpu-cycles:");
        assert!(all.contains(&"software:bpf-output:".to_string()));
    }

    #[test]
    fn timed_providers_say_how_to_write_one() {
        assert_eq!(
            timed_provider_error("profile"),
            "weft: profile probes have no names to list: write profile:UNIT:RATE, e.g. profile:hz:99 or profile:ms:100"
        );
    }
}
