//! `rawtracepoint:NAME` (alias `rt`), also `rawtracepoint:MODULE:NAME`: a
//! tracepoint's raw arguments, before the tracepoint formats its record.
//! Cheaper than `tracepoint:` and sees what the record leaves out
//! (`sys_enter` gets the task's `struct pt_regs *` and the syscall number).
//!
//! The program is `BPF_PROG_TYPE_RAW_TRACEPOINT` (section `raw_tp/NAME`):
//! its context is an array of u64, `arg0`..`argN`. With BTF the arguments
//! also have names and types (`args->NAME`), from the `btf_trace_NAME`
//! typedef (whose first parameter, the tracepoint's private data, programs
//! never see). Without BTF, names come from tracefs and `argN` is all there is.
//!
//! `tp_btf:NAME` (a weft extension, what `weft offcpu` uses where the kernel
//! loads it) is the same tracepoint as a BTF-typed tracing program
//! (`BPF_PROG_TYPE_TRACING`, section `tp_btf/NAME`): the same arguments, and
//! the verifier knows their types. It needs kernel BTF.
//!
//! bpftrace's current release loads every `rawtracepoint` as that tracing
//! program. weft does so only for a probe whose body calls a helper the
//! kernel gives to tracing programs alone (`socket_cookie`, `skboutput`:
//! [`as_tracing_program`]), on a kernel with BTF; other probes stay
//! `raw_tp`, which loads on kernels without BTF and runs under
//! `BPF_PROG_TEST_RUN`. Both attach to the same tracepoint and read the same
//! arguments.

use ktypes::{FieldKind, KernelInfo};
use source::Diagnostic;

use super::{AttachPointRef, Context, ListQuery, Needs, ProviderDef, ResolvedProbe, glob_match};
use crate::diagnostics as diag;

/// `tp_btf:NAME`: the raw tracepoint as a BTF-typed tracing program.
pub const TP_BTF: ProviderDef = ProviderDef {
    name: "tp_btf",
    aliases: &[],
    usage: "tp_btf:NAME",
    help: "a tracepoint's raw arguments, as a BTF-typed tracing program (needs kernel BTF)",
    resolve: resolve_tp_btf,
    list: None,
    listed_by: super::Listed::Named,
    pid_filter: true,
    needs: Needs::TpBtf,
};

pub const DEF: ProviderDef = ProviderDef {
    name: "rawtracepoint",
    aliases: &["rt"],
    usage: "rawtracepoint:[MODULE:]NAME",
    help: "a tracepoint's raw arguments (arg0..argN; args->NAME with BTF)",
    resolve,
    list: Some(list),
    listed_by: super::Listed::Kernel,
    pid_filter: true,
    needs: Needs::Bpf,
};

/// `-l 'rawtracepoint:[MODULE:]PATTERN'`: the `btf_trace_*` tracepoints
/// (or tracefs names without BTF) as `rawtracepoint:vmlinux:NAME`, sorted,
/// as bpftrace's current release lists them; `-lv` prints their raw arguments.
fn list(q: &ListQuery<'_>, kernel: &dyn KernelInfo) -> Result<Vec<String>, String> {
    let pattern = match q.pattern {
        "" => "*:*".to_string(),
        p if !p.contains(':') => format!("*:{p}"),
        p => p.to_string(),
    };
    let mut names = names(kernel).map_err(|e| format!("error: cannot list raw tracepoints: {e}"))?;
    names.sort();
    let btf = kernel.btf().ok();
    let mut out = Vec::new();
    for n in names
        .iter()
        .filter(|n| glob_match(&pattern, &format!("{MODULE}:{n}")))
    {
        out.push(format!("rawtracepoint:{MODULE}:{n}"));
        if let (true, Some(f)) = (q.verbose, btf.and_then(|b| b.raw_tracepoint(n))) {
            super::kprobe::function_lines(&f, false, &mut out);
        }
    }
    Ok(out)
}

pub fn resolve(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    _pid: Option<u32>,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    resolve_as(ap, kernel, false)
}

fn resolve_tp_btf(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    _pid: Option<u32>,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    if kernel.btf().is_err() {
        return Err(diag::bad_attach_point(
            ap.span,
            ap.raw,
            "tp_btf:NAME, on a kernel with BTF (/sys/kernel/btf/vmlinux); rawtracepoint:NAME works without",
        ));
    }
    resolve_as(ap, kernel, true)
}

/// Resolves `rawtracepoint:` (`tp_btf` false) or `tp_btf:` attach points.
fn resolve_as(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    tp_btf: bool,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    let usage = if tp_btf {
        "tp_btf:NAME"
    } else {
        "rawtracepoint:NAME or rawtracepoint:MODULE:NAME"
    };
    let target = match ap.parts {
        [n] => n.as_str(),
        // Kernel modules' tracepoints are described by their own BTF, which
        // weft does not read: vmlinux (or a wildcard that takes it) only.
        [module, n] if glob_match(module, MODULE) => n.as_str(),
        [module, n] => {
            return Err(diag::raw_tracepoint_not_found(ap.span, Some(module), n));
        }
        _ => return Err(diag::bad_attach_point(ap.span, ap.raw, usage)),
    };
    if target.is_empty()
        || !target
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'*' | b'?'))
    {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    }
    let btf = kernel.btf().ok();
    let known = names(kernel);
    let chosen: Vec<String> = if target.contains(['*', '?']) {
        let known = known.map_err(|e| diag::kernel_info(ap.span, &e))?;
        let matched: Vec<String> = known
            .into_iter()
            .filter(|n| glob_match(target, n))
            .collect();
        if matched.is_empty() {
            return Err(diag::no_probe_matches(ap.span, ap.raw));
        }
        matched
    } else {
        if let Ok(known) = &known
            && !known.iter().any(|n| n == target) {
                return Err(diag::raw_tracepoint_not_found(ap.span, None, target));
            }
        vec![target.to_string()]
    };
    Ok(chosen
        .into_iter()
        .map(|name| {
            // raw_tp programs read their context 8 bytes at a time: every
            // argument is a full u64, sign-extended by the kernel.
            let args = btf.and_then(|b| b.raw_tracepoint(&name)).map(|f| {
                let mut format = f.args_format();
                for field in &mut format.fields {
                    field.size = 8;
                    if field.kind != FieldKind::Pointer {
                        field.kind = FieldKind::Int;
                    }
                }
                format
            });
            let (provider, section) = if tp_btf {
                (TP_BTF.name, format!("tp_btf/{name}"))
            } else {
                (DEF.name, format!("raw_tp/{name}"))
            };
            ResolvedProbe {
                provider,
                attach: abi::Attach::RawTracepoint { name: name.clone() },
                section,
                name: format!("{provider}:{name}"),
                context: Context::RawTracepoint { args },
                short: name,
            }
        })
        .collect())
}

/// A resolved `rawtracepoint` probe made a BTF-typed tracing program
/// (section `tp_btf/NAME`), where the kernel has BTF: the verifier then
/// knows its pointer arguments' types, which `bpf_get_socket_cookie` and
/// `bpf_skb_output` require. Anything else is left as it is (the builtin
/// says why it cannot run there).
pub fn as_tracing_program(probe: &mut ResolvedProbe, kernel: &dyn KernelInfo) {
    if probe.provider == DEF.name && kernel.btf().is_ok() {
        probe.section = format!("tp_btf/{}", probe.short);
    }
}

/// The module whose raw tracepoints weft finds (the kernel's own).
const MODULE: &str = "vmlinux";

/// Every raw tracepoint: the `btf_trace_*` typedefs with BTF, else the
/// names of the tracefs tracepoints.
pub fn names(kernel: &dyn KernelInfo) -> Result<Vec<String>, ktypes::KernelInfoError> {
    if let Ok(btf) = kernel.btf() {
        let names = btf.raw_tracepoint_names();
        if !names.is_empty() {
            return Ok(names.into_iter().map(String::from).collect());
        }
    }
    let mut v: Vec<String> = kernel.tracepoints()?.into_iter().map(|(_, n)| n).collect();
    v.sort();
    v.dedup();
    Ok(v)
}
