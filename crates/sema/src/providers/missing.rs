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
//! (a probe left with none is removed, with a warning); or nothing.
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
    let mut missing = Vec::new();
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
                None => missing.push(d),
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
    let several = aps.len() > 1;
    match policy {
        None if several && !found.is_empty() => diags.extend(
            missing
                .into_iter()
                .map(|d| skipped(d, "the probe runs with its other attach points")),
        ),
        None | Some(MissingProbes::Error) => diags.extend(missing),
        Some(MissingProbes::Warn) => {
            let none_left = found.is_empty() && !missing.is_empty();
            diags.extend(
                missing
                    .into_iter()
                    .map(|d| skipped(d, "the program runs without it")),
            );
            if none_left && let Some(first) = aps.first() {
                diags.push(
                    Diagnostic::warning("this probe has no attach point here: it is left out")
                        .with_label(first.span, "none of its attach points exists")
                        .with_note("the program runs without it (`missing_probes = \"warn\"`)"),
                );
            }
        }
        Some(MissingProbes::Ignore) => {}
    }
    (found, diags)
}

/// The error of a missing attach point, as the warning that it is skipped.
fn skipped(mut d: Diagnostic, runs: &str) -> Diagnostic {
    d.severity = Severity::Warning;
    d.message = format!("skipped: {}", d.message);
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
