//! What `software:` and `hardware:` share: an event table, the
//! `PROVIDER:EVENT[:COUNT]` grammar and the `-l` listing. The program is a
//! `perf_event` program run every COUNT events on every online CPU
//! (`runtime::attach::perf_event`).
//!
//! `-l 'software:PATTERN'` prints one line per event name and per alias
//! that matches, sorted, in bpftrace's form `software:NAME:` (the count
//! that may follow is left out), as its current release lists them.

use ktypes::KernelInfo;
use source::Diagnostic;

use super::{AttachPointRef, Context, ListQuery, ResolvedProbe, glob_match};
use crate::diagnostics as diag;

/// One perf event: its name, bpftrace's alias (or `""`), the default count
/// between samples and the `perf_event_attr.config` value.
pub struct Event {
    pub name: &'static str,
    pub alias: &'static str,
    pub default_count: u64,
    pub config: u64,
}

/// An event of a provider's table: its name, alias (or ""), bpftrace's
/// default count and its `perf_event_attr.config`.
pub const fn ev(name: &'static str, alias: &'static str, default_count: u64, config: u64) -> Event {
    Event {
        name,
        alias,
        default_count,
        config,
    }
}

/// Resolves `provider:EVENT[:COUNT]` against `table`.
pub fn resolve(
    ap: &AttachPointRef<'_>,
    provider: &'static str,
    event_type: u32,
    table: &[Event],
) -> Result<ResolvedProbe, Diagnostic> {
    let usage = format!("{provider}:EVENT or {provider}:EVENT:COUNT");
    let (name, count) = match ap.parts {
        [name] => (name.as_str(), None),
        [name, count] => (name.as_str(), Some(count.as_str())),
        _ => return Err(diag::bad_attach_point(ap.span, ap.raw, &usage)),
    };
    let Some(event) = table
        .iter()
        .find(|e| e.name == name || (!e.alias.is_empty() && e.alias == name))
    else {
        let known: Vec<&str> = table
            .iter()
            .flat_map(|e| [e.name, e.alias])
            .filter(|n| !n.is_empty())
            .collect();
        return Err(diag::unknown_perf_event(ap.span, provider, name, &known));
    };
    let count = match count {
        None => event.default_count,
        Some(text) => {
            parse_count(text).ok_or_else(|| diag::bad_attach_point(ap.span, ap.raw, &usage))?
        }
    };
    let written = match ap.parts {
        [_] => format!("{provider}:{name}"),
        _ => format!("{provider}:{name}:{count}"),
    };
    Ok(ResolvedProbe {
        provider,
        attach: abi::Attach::PerfEvent {
            event_type,
            config: event.config,
            period: count,
        },
        section: "perf_event".into(),
        name: written,
        context: Context::None,
        short: format!("{}_{}", &provider[..1], event.name.replace('-', "_")),
    })
}

/// A positive count as bpftrace reads one: `_` separators, `0x` hex,
/// `1e6` (see [`crate::numbers`]).
pub fn parse_count(text: &str) -> Option<u64> {
    crate::numbers::parse_uint(text).ok().filter(|&n| n > 0)
}

/// The `-l` lines of `table`'s events that `q.pattern` names: each name
/// and each alias it matches, sorted.
pub fn list(q: &ListQuery<'_>, table: &[Event]) -> Vec<String> {
    let provider = q.provider.name;
    // `software:cpu-clock:1000` lists `software:cpu-clock:`.
    let name = q.pattern.split(':').next().unwrap_or("");
    let name = if name.is_empty() { "*" } else { name };
    let mut out: Vec<String> = table
        .iter()
        .flat_map(|e| [e.name, e.alias])
        .filter(|n| !n.is_empty() && glob_match(name, n))
        .map(|shown| format!("{provider}:{shown}:"))
        .collect();
    out.sort();
    out
}

/// [`list`] as a provider's listing (never fails: the table is weft's own).
pub fn list_table(
    q: &ListQuery<'_>,
    _: &dyn KernelInfo,
    table: &[Event],
) -> Result<Vec<String>, String> {
    Ok(list(q, table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::{hardware, interval, software};

    fn lines(hardware: bool, pattern: &str) -> Vec<String> {
        let (provider, table) = if hardware {
            (&hardware::DEF, hardware::EVENTS)
        } else {
            (&software::DEF, software::EVENTS)
        };
        let query = ListQuery {
            provider,
            pattern,
            verbose: false,
            pid: None,
        };
        list(&query, table)
    }

    fn unqualified(pattern: &str) -> Vec<String> {
        let mut out = lines(true, pattern);
        out.extend(lines(false, pattern));
        out
    }

    fn timed_provider_lines(provider: &str, pattern: &str) -> Vec<String> {
        let def = crate::providers::provider_def(provider).unwrap();
        let query = ListQuery {
            provider: def,
            pattern,
            verbose: false,
            pid: None,
        };
        let kernel = ktypes::FixtureKernel::typical();
        interval::list(&query, &kernel).unwrap()
    }

    // Captured from bpftrace 0.17 on this machine (`bpftrace -l PATTERN`).
    const BPFTRACE_SOFTWARE_CPU_CLOCK: &str = "software:cpu-clock:\n";
    const BPFTRACE_SOFTWARE_CPU: &str = "software:cpu:\n";

    fn text(lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    #[test]
    fn counts_as_bpftrace_reads_them() {
        assert_eq!(parse_count("1e6"), Some(1_000_000));
        assert_eq!(parse_count("1_000"), Some(1000));
        assert_eq!(parse_count("0x100"), Some(256));
        assert_eq!(parse_count("0"), None);
        assert_eq!(parse_count("1k"), None);
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
    fn wildcards_list_every_matching_name_and_alias_sorted() {
        assert_eq!(
            lines(false, "*"),
            [
                "software:alignment-faults:",
                "software:bpf-output:",
                "software:context-switches:",
                "software:cpu-clock:",
                "software:cpu-migrations:",
                "software:cpu:",
                "software:cs:",
                "software:dummy:",
                "software:emulation-faults:",
                "software:faults:",
                "software:major-faults:",
                "software:minor-faults:",
                "software:page-faults:",
                "software:task-clock:",
            ]
        );
        assert_eq!(
            lines(true, "*cycles"),
            [
                "hardware:bus-cycles:",
                "hardware:cpu-cycles:",
                "hardware:cycles:",
                "hardware:ref-cycles:"
            ]
        );
        assert_eq!(
            lines(false, "*fault*"),
            [
                "software:alignment-faults:",
                "software:emulation-faults:",
                "software:faults:",
                "software:major-faults:",
                "software:minor-faults:",
                "software:page-faults:",
            ]
        );
        assert_eq!(lines(true, "*").len(), 12);
        assert!(lines(true, "no-such-event").is_empty());
    }

    #[test]
    fn both_providers_list_every_event() {
        let all = unqualified("*");
        assert_eq!(all.len(), 26);
        assert_eq!(all[0], "hardware:backend-stalls:");
        assert!(all.contains(&"software:bpf-output:".to_string()));
    }

    #[test]
    fn timed_providers_list_their_units() {
        assert_eq!(
            timed_provider_lines("profile", "*"),
            ["profile:hz:", "profile:ms:", "profile:s:", "profile:us:"]
        );
        assert_eq!(timed_provider_lines("interval", "m*"), ["interval:ms:"]);
        assert_eq!(timed_provider_lines("interval", "s:1"), ["interval:s:"]);
    }
}
