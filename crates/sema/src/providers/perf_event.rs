//! What `software:` and `hardware:` share: an event table and the
//! `PROVIDER:EVENT[:COUNT]` grammar. The program is a `perf_event` program
//! run every COUNT events on every online CPU (`runtime::attach::perf_event`).

use source::Diagnostic;

use super::{AttachPointRef, Context, ResolvedProbe};
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
    provider: &str,
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

/// A positive count, `_` separators allowed.
pub fn parse_count(text: &str) -> Option<u64> {
    text.replace('_', "").parse().ok().filter(|&n: &u64| n > 0)
}
