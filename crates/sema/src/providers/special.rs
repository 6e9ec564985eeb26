//! `BEGIN` and `END`: programs that user space runs once, before the other
//! probes attach and after they detach (BPF_PROG_TEST_RUN of a raw_tp program).

use ktypes::KernelInfo;
use source::Diagnostic;

use super::{AttachPointRef, Context, Needs, ProviderDef, ResolvedProbe};

pub const BEGIN: ProviderDef = ProviderDef {
    name: "BEGIN",
    aliases: &["begin"],
    usage: "BEGIN",
    help: "runs once, before the other probes attach",
    resolve: resolve_begin,
    list: None,
    listed_by: super::Listed::Named,
    pid_filter: false,
    needs: Needs::Bpf,
};

pub const END: ProviderDef = ProviderDef {
    name: "END",
    aliases: &["end"],
    usage: "END",
    help: "runs once, after the other probes detach",
    resolve: resolve_end,
    list: None,
    listed_by: super::Listed::Named,
    pid_filter: false,
    needs: Needs::Bpf,
};

fn resolve_begin(
    ap: &AttachPointRef<'_>,
    _: &dyn KernelInfo,
    _: Option<u32>,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    Ok(vec![as_written(begin(), ap)])
}

fn resolve_end(
    ap: &AttachPointRef<'_>,
    _: &dyn KernelInfo,
    _: Option<u32>,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    Ok(vec![as_written(end(), ap)])
}

/// `begin`/`end` as the current dialect writes them: `probe` then says
/// `begin`, as bpftrace's current release does; `BEGIN` stays `BEGIN` (0.17).
fn as_written(mut probe: ResolvedProbe, ap: &AttachPointRef<'_>) -> ResolvedProbe {
    if ap.provider == probe.short {
        probe.name = probe.short.clone();
    }
    probe
}

pub fn begin() -> ResolvedProbe {
    ResolvedProbe {
        provider: BEGIN.name,
        attach: abi::Attach::Begin,
        section: "raw_tp".into(),
        name: "BEGIN".into(),
        context: Context::None,
        short: "begin".into(),
    }
}

pub fn end() -> ResolvedProbe {
    ResolvedProbe {
        provider: END.name,
        attach: abi::Attach::End,
        section: "raw_tp".into(),
        name: "END".into(),
        context: Context::None,
        short: "end".into(),
    }
}
