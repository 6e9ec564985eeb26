//! `interval:UNIT:N` and `interval:Nunit` (alias `i`): a timer firing on one CPU.
//! Units: `s`, `ms`, `us`, `hz`.

use ktypes::KernelInfo;
use source::Diagnostic;

use super::{AttachPointRef, Context, ListQuery, Needs, ProviderDef, ResolvedProbe};
use crate::diagnostics as diag;

pub const DEF: ProviderDef = ProviderDef {
    name: "interval",
    aliases: &["i"],
    usage: "interval:UNIT:N (s, ms, us, hz)",
    help: "a timer firing on one CPU",
    resolve: |ap, _, _| resolve(ap).map(|p| vec![p]),
    list: Some(list),
    listed_by: super::Listed::Named,
    pid_filter: false,
    needs: Needs::PerfSoftware,
};

/// A timer lists its units (`interval:hz:`, `interval:ms:`, ...), sorted,
/// as bpftrace's current release does; the rate that may follow is left out.
pub(super) fn list(q: &ListQuery<'_>, _: &dyn KernelInfo) -> Result<Vec<String>, String> {
    let provider = q.provider.name;
    let unit = q.pattern.split(':').next().unwrap_or("");
    let unit = if unit.is_empty() { "*" } else { unit };
    Ok(["hz", "ms", "s", "us"]
        .into_iter()
        .filter(|u| super::glob_match(unit, u))
        .map(|u| format!("{provider}:{u}:"))
        .collect())
}

pub fn resolve(ap: &AttachPointRef<'_>) -> Result<ResolvedProbe, Diagnostic> {
    let usage = "interval:s:N, interval:ms:N, interval:us:N, interval:hz:N or interval:Ns";
    let (unit, count) = match ap.parts {
        [unit, count] => (unit.as_str(), count.as_str()),
        [both] => {
            let split = both
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(both.len());
            (&both[split..], &both[..split])
        }
        _ => return Err(diag::bad_attach_point(ap.span, ap.raw, usage)),
    };
    let count: u64 = super::perf_event::parse_count(count)
        .ok_or_else(|| diag::bad_attach_point(ap.span, ap.raw, usage))?;
    let period_ns = match unit {
        "s" => count.checked_mul(1_000_000_000),
        "ms" => count.checked_mul(1_000_000),
        "us" => count.checked_mul(1_000),
        "ns" => Some(count),
        "hz" => Some(1_000_000_000 / count).filter(|&p| p > 0),
        _ => None,
    }
    .ok_or_else(|| diag::bad_attach_point(ap.span, ap.raw, usage))?;
    Ok(ResolvedProbe {
        provider: DEF.name,
        attach: abi::Attach::Interval { period_ns },
        section: "perf_event".into(),
        name: format!("interval:{unit}:{count}"),
        context: Context::None,
        short: format!("interval_{unit}{count}"),
    })
}
