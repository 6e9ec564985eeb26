//! What an attach point that does not exist here does to its probe.
//!
//! bpftrace's tools list every name a function had across versions
//! (`kprobe:blk_account_io_start, kprobe:__blk_account_io_start`) or across
//! builds of a library (sslsnoop.bt's libssl and libcrypto functions), and
//! expect what exists to be traced. The rule, without a setting: in a list
//! of several attach points a missing one is a warning that names it and the
//! probe runs with the rest; it is an error when none of them exists or when
//! the attach point is alone. `config = { missing_probes = "error" | "warn"
//! | "ignore" }` (or `BPFTRACE_MISSING_PROBES`) chooses instead, as in
//! bpftrace's current release: every missing one an error; a warning each
//! (a probe left with none is removed, with a warning); or nothing. The
//! words are bpftrace's: `No matches for tracepoint syscalls:nonsense.`,
//! `... Skipping.` when skipped, and `Probe has no valid attach points.` for
//! a probe whose only attach points are wildcards that match nothing.
//!
//! A library that lacks a symbol which a library it needs defines is not
//! missing: since glibc 2.34 `libpthread.so.0` is empty and
//! `pthread_create` is in `libc.so.6`, where every call lands. The probe is
//! placed there, with a warning that says so.
//!
//! A uprobe placement weft cannot vouch for (inside an instruction, or
//! where it cannot tell) is not missing: it is an error, which `--unsafe`
//! turns into a warning while the probe is placed unchecked
//! ([`super::placement`]).

use ktypes::KernelInfo;
use source::{Code, Diagnostic, Severity};

use super::{AttachPointRef, ResolvedProbe, placement, userbin};
use crate::config::MissingProbes;
use crate::diagnostics as diag;

/// Whether a diagnostic says that an attach point does not exist on this
/// machine (as opposed to one written wrong, or a kernel that cannot run it).
fn is_missing(d: &Diagnostic) -> bool {
    d.code
        .is_some_and(|c| Code::MISSING_ATTACH_POINT.contains(&c))
}

/// Resolves the attach points of one probe, applying the missing-probe rule
/// (`policy` from the script's config; `None`: the rule of bpftrace's tools)
/// and `--unsafe` (`unsafe_mode`) to placements weft cannot vouch for.
/// Returns, for each attach point that resolved, its index and probes, and
/// the diagnostics (errors and warnings) to report.
pub(crate) fn resolve_list(
    aps: &[AttachPointRef<'_>],
    policy: Option<MissingProbes>,
    unsafe_mode: bool,
    kernel: &dyn KernelInfo,
    pid: Option<u32>,
    mut resolve: impl FnMut(&AttachPointRef<'_>) -> Result<Vec<ResolvedProbe>, Diagnostic>,
) -> (Vec<(usize, Vec<ResolvedProbe>)>, Vec<Diagnostic>) {
    let mut found = Vec::new();
    let mut missing: Vec<(usize, Diagnostic)> = Vec::new();
    let mut diags = Vec::new();
    for (i, ap) in aps.iter().enumerate() {
        match resolve(ap) {
            Ok(probes) => found.push((i, probes)),
            Err(d) if is_missing(&d) => match relocated(ap, kernel, pid, &mut resolve) {
                Some((probes, note)) => {
                    if policy != Some(MissingProbes::Ignore) {
                        diags.push(note);
                    }
                    found.push((i, probes));
                }
                None => missing.push((i, d)),
            },
            Err(d) if placement::is_unsafe_placement(&d) && unsafe_mode => {
                let unchecked = AttachPointRef {
                    unchecked: true,
                    ..ap.clone()
                };
                match resolve(&unchecked) {
                    Ok(probes) => {
                        diags.push(placement::unsafe_placement(d, true));
                        found.push((i, probes));
                    }
                    Err(e) => diags.push(e),
                }
            }
            Err(d) if placement::is_unsafe_placement(&d) => {
                diags.push(placement::unsafe_placement(d, false))
            }
            Err(d) => diags.push(d),
        }
    }
    let none_left = found.is_empty() && !missing.is_empty();
    let several = aps.len() > 1;
    match policy {
        None if several && !found.is_empty() => diags.extend(
            missing
                .into_iter()
                .map(|(_, d)| skipped(d, "the probe runs with its other attach points")),
        ),
        None | Some(MissingProbes::Error) => {
            // bpftrace expands a wildcard that matches nothing into no
            // attach point at all: what it reports is the empty probe.
            if none_left && missing.iter().all(|(i, _)| is_wildcard(&aps[*i])) {
                let mut d = diag::probe_without_attach_points(aps[0].span, false);
                for (_, miss) in &missing {
                    d = d.with_note(miss.message.clone());
                }
                diags.push(d);
            } else {
                diags.extend(missing.into_iter().map(|(_, d)| d));
            }
        }
        Some(MissingProbes::Warn) => {
            diags.extend(
                missing
                    .into_iter()
                    .map(|(_, d)| skipped(d, "the program runs without it")),
            );
            if none_left {
                diags.push(diag::probe_without_attach_points(aps[0].span, true));
            }
        }
        Some(MissingProbes::Ignore) => {}
    }
    (found, diags)
}

/// An attach point that names a set rather than one thing: a wildcard, or a
/// raw tracepoint without its module (any module, to bpftrace).
fn is_wildcard(ap: &AttachPointRef<'_>) -> bool {
    ap.raw.contains(['*', '?'])
        || (matches!(ap.provider, "rawtracepoint" | "rt") && ap.parts.len() == 1)
}

/// The error of a missing attach point, as bpftrace's warning that it is
/// skipped (`No matches for tracepoint nonsense:nonsense. Skipping.`).
fn skipped(mut d: Diagnostic, runs: &str) -> Diagnostic {
    d.severity = Severity::Warning;
    d.message = if d.message.ends_with('.') {
        format!("{} Skipping.", d.message)
    } else {
        format!("{}. Skipping.", d.message)
    };
    d.notes.push(format!("not attached: {runs}"));
    d.help.push(
        "config = { missing_probes = \"error\" } makes a missing attach point an error".into(),
    );
    d
}

/// A uprobe whose library lacks the symbol, placed in the library it needs
/// that defines it (as the dynamic loader resolves the calls), with the
/// warning that says where.
fn relocated(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    pid: Option<u32>,
    resolve: &mut impl FnMut(&AttachPointRef<'_>) -> Result<Vec<ResolvedProbe>, Diagnostic>,
) -> Option<(Vec<ResolvedProbe>, Diagnostic)> {
    if !matches!(ap.provider, "uprobe" | "u" | "uretprobe" | "ur") {
        return None;
    }
    let [binary, target] = ap.parts else {
        return None;
    };
    let name = target.split_once('+').map_or(target.as_str(), |(n, _)| n);
    let (library, provider) = userbin::defining_dependency(binary, name, pid, kernel, ap.span)?;
    let parts = [provider.clone(), target.clone()];
    let moved = AttachPointRef {
        parts: &parts,
        ..ap.clone()
    };
    let probes = resolve(&moved).ok()?;
    let note = Diagnostic::warning(format!(
        "`{name}` is not in `{library}` but in `{provider}`, which it loads: probing it there"
    ))
    .with_label(ap.span, format!("attached to `{provider}:{name}`"));
    let why = if library.contains("libpthread") {
        " (glibc 2.34 moved libpthread's functions into libc)"
    } else {
        ""
    };
    let note = note.with_note(format!(
        "the dynamic loader resolves calls to `{name}` there{why}"
    ));
    Some((probes, note))
}
