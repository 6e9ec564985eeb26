//! `bench:NAME`: a micro benchmark, as bpftrace's `bench` probes. Under
//! `--mode bench` (or `--bench`) weft runs each one many times with
//! `BPF_PROG_TEST_RUN`, more each round until a round takes a millisecond,
//! and prints the kernel's mean time per run; without it, bench probes are
//! left out of the program.
//!
//! The program is an XDP program (the kind whose test runs repeat and are
//! timed by the kernel), so its body has no task, registers or arguments:
//! maps, arithmetic, `rand`, `nsecs` and the like.

use source::Diagnostic;

use super::{AttachPointRef, Context, Needs, ProviderDef, ResolvedProbe};
use crate::diagnostics as diag;

pub const DEF: ProviderDef = ProviderDef {
    name: "bench",
    aliases: &[],
    usage: "bench:NAME",
    help: "a micro benchmark, timed under --mode bench",
    resolve: |ap, _, _| resolve(ap).map(|p| vec![p]),
    list: None,
    listed_by: super::Listed::Named,
    pid_filter: false,
    needs: Needs::Bpf,
};

fn resolve(ap: &AttachPointRef<'_>) -> Result<ResolvedProbe, Diagnostic> {
    let [name] = ap.parts else {
        return Err(diag::bad_attach_point(ap.span, ap.raw, "bench:NAME"));
    };
    if name.is_empty() || name.contains(['*', '?']) {
        return Err(diag::bad_attach_point(ap.span, ap.raw, "bench:NAME"));
    }
    Ok(ResolvedProbe {
        provider: DEF.name,
        attach: abi::Attach::Bench { name: name.clone() },
        section: "xdp".into(),
        name: format!("bench:{name}"),
        context: Context::None,
        short: format!("bench_{name}"),
    })
}
