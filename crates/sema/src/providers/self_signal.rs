//! `self:signal:SIGUSR1`: runs when weft itself receives the signal, as
//! bpftrace's `self` probes do (`kill -USR1 $(pidof weft)` to print a
//! snapshot of the maps, say). Several such probes run in the order they
//! are written, each time the signal arrives.
//!
//! The program is run by user space, like BEGIN (`BPF_PROG_TEST_RUN` of a
//! `raw_tp` program), from the event loop: the signal handler only notes
//! that it came. SIGUSR1 is the one signal bpftrace has for this; weft
//! takes the same.

use source::Diagnostic;

use super::{AttachPointRef, Context, Needs, ProviderDef, ResolvedProbe};
use crate::diagnostics as diag;

pub const DEF: ProviderDef = ProviderDef {
    name: "self",
    aliases: &[],
    usage: "self:signal:SIGUSR1",
    help: "runs each time weft receives the signal (from kill -USR1)",
    resolve: |ap, _, _| resolve(ap).map(|p| vec![p]),
    list: Some(|q, _| Ok(list(q.pattern))),
    listed_by: super::Listed::Named,
    pid_filter: false,
    needs: Needs::Bpf,
};

/// The signals a `self` probe can wait for, with their numbers.
const SIGNALS: &[(&str, i32)] = &[("SIGUSR1", 10)];

fn resolve(ap: &AttachPointRef<'_>) -> Result<ResolvedProbe, Diagnostic> {
    let usage = "self:signal:SIGUSR1";
    let [trigger, signal] = ap.parts else {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    };
    if trigger != "signal" {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    }
    let Some(&(name, number)) = SIGNALS.iter().find(|(n, _)| n == signal) else {
        return Err(diag::unsupported_self_signal(ap.span, signal));
    };
    Ok(ResolvedProbe {
        provider: DEF.name,
        attach: abi::Attach::Signal { signal: number },
        section: "raw_tp".into(),
        name: format!("self:signal:{name}"),
        context: Context::None,
        short: format!("self_{}", name.to_ascii_lowercase()),
    })
}

/// `-l 'self:PATTERN'`: `self:signal:SIGUSR1`.
fn list(pattern: &str) -> Vec<String> {
    SIGNALS
        .iter()
        .map(|(name, _)| format!("signal:{name}"))
        .filter(|p| super::glob_match(pattern, p))
        .map(|p| format!("self:{p}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_its_one_signal() {
        assert_eq!(list("*"), ["self:signal:SIGUSR1"]);
        assert_eq!(list("signal:*"), ["self:signal:SIGUSR1"]);
        assert!(list("timer:*").is_empty());
    }
}
