//! `profile:hz:N`, `profile:s:N`, `profile:ms:N`, `profile:us:N` (alias `p`):
//! a timer sample on every online CPU, for on-CPU profiles. It is the
//! software cpu-clock event, which every kernel has (bpftrace 0.17 uses the
//! same), with a period of `1e9 / N` ns for `hz` and the given time otherwise.

use ktypes::KernelInfo;
use source::Diagnostic;

use super::{AttachPointRef, Context, Needs, ProviderDef, ResolvedProbe};
use crate::diagnostics as diag;

pub const DEF: ProviderDef = ProviderDef {
    name: "profile",
    aliases: &["p"],
    usage: "profile:UNIT:N (hz, s, ms, us)",
    help: "a timer sample on every CPU, for on-CPU profiles",
    resolve: |ap, kernel, _| {
        check_rate(ap, kernel)?;
        resolve(ap).map(|p| vec![p])
    },
    list: Some(super::interval::list),
    listed_by: super::Listed::Named,
    pid_filter: true,
    needs: Needs::PerfSoftware,
};

/// `PERF_TYPE_SOFTWARE` / `PERF_COUNT_SW_CPU_CLOCK`.
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;

/// Where the kernel keeps the highest sampling rate it allows (in Hz).
const MAX_SAMPLE_RATE: &str = "/proc/sys/kernel/perf_event_max_sample_rate";

/// `profile:hz:N` above the kernel's `perf_event_max_sample_rate` is
/// refused, as the kernel refuses bpftrace's sampling event at that rate
/// (weft's timer would be accepted, then throttled: samples lost unsaid).
fn check_rate(ap: &AttachPointRef<'_>, kernel: &dyn KernelInfo) -> Result<(), Diagnostic> {
    let [unit, count] = ap.parts else {
        return Ok(());
    };
    let Some(hz) = super::perf_event::parse_count(count).filter(|_| unit == "hz") else {
        return Ok(());
    };
    let max = kernel
        .read_file(MAX_SAMPLE_RATE)
        .ok()
        .and_then(|b| String::from_utf8_lossy(&b).trim().parse::<u64>().ok());
    match max {
        Some(max) if hz > max => Err(diag::sample_rate_too_high(ap.span, hz, max)),
        _ => Ok(()),
    }
}

pub fn resolve(ap: &AttachPointRef<'_>) -> Result<ResolvedProbe, Diagnostic> {
    let usage = "profile:hz:N, profile:s:N, profile:ms:N or profile:us:N";
    let [unit, count] = ap.parts else {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    };
    let bad = || diag::bad_attach_point(ap.span, ap.raw, usage);
    let n = super::perf_event::parse_count(count).ok_or_else(bad)?;
    let period = match unit.as_str() {
        "hz" => Some(1_000_000_000 / n).filter(|&p| p > 0),
        "s" => n.checked_mul(1_000_000_000),
        "ms" => n.checked_mul(1_000_000),
        "us" => n.checked_mul(1_000),
        _ => None,
    }
    .ok_or_else(bad)?;
    Ok(ResolvedProbe {
        provider: DEF.name,
        attach: abi::Attach::PerfEvent {
            event_type: PERF_TYPE_SOFTWARE,
            config: PERF_COUNT_SW_CPU_CLOCK,
            period,
        },
        section: "perf_event".into(),
        name: format!("profile:{unit}:{n}"),
        context: Context::None,
        short: format!("profile_{unit}{n}"),
    })
}
