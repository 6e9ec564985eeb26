//! `interval:UNIT:N` and `interval:Nunit` (alias `i`): a timer firing on one CPU.
//! Units: `s`, `ms`, `us`, `hz`.

use source::Diagnostic;

use super::{AttachPointRef, Context, ResolvedProbe};
use crate::diagnostics as diag;

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
    let count: u64 = count
        .replace('_', "")
        .parse()
        .ok()
        .filter(|&n| n > 0)
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
        attach: abi::Attach::Interval { period_ns },
        section: "perf_event".into(),
        name: format!("interval:{unit}:{count}"),
        context: Context::None,
        short: format!("interval_{unit}{count}"),
    })
}
