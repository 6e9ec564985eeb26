//! Kernel function probes:
//!
//! - `kprobe:FUNCTION` (alias `k`), `kprobe:FUNCTION+OFFSET`,
//!   `kprobe:MODULE:FUNCTION`, and `kretprobe:...` (alias `kr`, no offset):
//!   a breakpoint at a function's entry (or an instruction in it), or at
//!   its return. Works without BTF; the context is the kernel's
//!   `struct pt_regs`: `arg0`..`argN`, `retval` (kretprobe), `func`.
//! - `fentry:FUNCTION` (aliases `kfunc`, `f`) and `fexit:FUNCTION` (`kretfunc`,
//!   `fr`), with an optional `MODULE:`: a BPF trampoline, cheaper than a
//!   kprobe. Needs BTF: the arguments are typed by the function's prototype
//!   (`args->NAME`), and fexit also sees `retval`.
//!
//! `FUNCTION` may be a wildcard (`vfs_*`), matched against the functions
//! ftrace can patch (tracefs `available_filter_functions`, or the text
//! symbols of `/proc/kallsyms` when that is unreadable) for kprobes, and
//! against the BTF function names for fentry/fexit.

use ktypes::{BtfFunction, KernelFunction, KernelInfo, KernelInfoError, btf::kind as btf_kind};
use source::Diagnostic;

use super::{
    AttachPointRef, Context, FentryMode, ListQuery, Needs, ProviderDef, ResolvedProbe, glob_match,
};
use crate::diagnostics as diag;
use crate::mechanism::{Mechanism, Usage, Written, choose};

pub const KPROBE: ProviderDef = ProviderDef {
    name: "kprobe",
    aliases: &["k"],
    usage: "kprobe:[MODULE:]FUNCTION[+OFFSET]",
    help: "a kernel function's entry (or an instruction in it); runs as fentry without kprobes",
    resolve: |ap, kernel, _| resolve(ap, kernel, Kind::Kprobe),
    list: Some(list),
    listed_by: super::Listed::Kernel,
    pid_filter: true,
    needs: Needs::KernelFunctions,
};

pub const KRETPROBE: ProviderDef = ProviderDef {
    name: "kretprobe",
    aliases: &["kr"],
    usage: "kretprobe:[MODULE:]FUNCTION",
    help: "a kernel function's return; runs as fexit without kprobes",
    resolve: |ap, kernel, _| resolve(ap, kernel, Kind::Kretprobe),
    list: Some(list),
    listed_by: super::Listed::Named,
    pid_filter: true,
    needs: Needs::KernelFunctions,
};

pub const FENTRY: ProviderDef = ProviderDef {
    name: "fentry",
    aliases: &["kfunc", "f"],
    usage: "fentry:[MODULE:]FUNCTION",
    help: "a kernel function's entry through a BPF trampoline, args->NAME typed by BTF; runs as a kprobe without trampolines",
    resolve: |ap, kernel, _| resolve(ap, kernel, Kind::Fentry),
    list: Some(list),
    listed_by: super::Listed::Kernel,
    pid_filter: true,
    needs: Needs::KernelFunctions,
};

pub const FEXIT: ProviderDef = ProviderDef {
    name: "fexit",
    aliases: &["kretfunc", "fr"],
    usage: "fexit:[MODULE:]FUNCTION",
    help: "a kernel function's return through a BPF trampoline, with its arguments and retval",
    resolve: |ap, kernel, _| resolve(ap, kernel, Kind::Fexit),
    list: Some(list),
    listed_by: super::Listed::Named,
    pid_filter: true,
    needs: Needs::KernelFunctions,
};

/// Which of the four probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Kprobe,
    Kretprobe,
    Fentry,
    Fexit,
}

impl Kind {
    pub(crate) fn is_trampoline(self) -> bool {
        matches!(self, Kind::Fentry | Kind::Fexit)
    }

    fn is_return(self) -> bool {
        matches!(self, Kind::Kretprobe | Kind::Fexit)
    }

    /// Its probe type.
    fn provider(self) -> &'static ProviderDef {
        match self {
            Kind::Kprobe => &KPROBE,
            Kind::Kretprobe => &KRETPROBE,
            Kind::Fentry => &FENTRY,
            Kind::Fexit => &FEXIT,
        }
    }

    /// The canonical name, or bpftrace's older `kfunc`/`kretfunc` when written so.
    fn name(self, written: &str) -> &'static str {
        match (self, written) {
            (Kind::Kprobe, _) => "kprobe",
            (Kind::Kretprobe, _) => "kretprobe",
            (Kind::Fentry, "kfunc") => "kfunc",
            (Kind::Fentry, _) => "fentry",
            (Kind::Fexit, "kretfunc") => "kretfunc",
            (Kind::Fexit, _) => "fexit",
        }
    }
}

/// Resolves a kprobe, kretprobe, fentry or fexit attach point.
pub fn resolve(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    kind: Kind,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    resolve_running_as(ap, kernel, kind, false)
}

/// [`resolve`], but with `other` the probe runs through the other mechanism
/// (`sema::mechanism` decided): fentry/fexit as kprobe/kretprobe, or
/// kprobe/kretprobe as fentry/fexit. The probe keeps its written name.
pub(crate) fn resolve_running_as(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    kind: Kind,
    other: bool,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    let name = kind.name(ap.provider);
    let usage = match kind {
        Kind::Kprobe => {
            format!("{name}:FUNCTION, {name}:FUNCTION+OFFSET or {name}:MODULE:FUNCTION")
        }
        _ => format!("{name}:FUNCTION or {name}:MODULE:FUNCTION"),
    };
    let (module, target) = match ap.parts {
        [f] => (None, f.as_str()),
        [m, f] if !m.is_empty() => (Some(m.as_str()), f.as_str()),
        _ => return Err(diag::bad_attach_point(ap.span, ap.raw, &usage)),
    };
    if target.is_empty() {
        return Err(diag::bad_attach_point(ap.span, ap.raw, &usage));
    }
    let (func, offset) = match target.split_once('+') {
        Some(_) if kind != Kind::Kprobe => {
            return Err(diag::kprobe_offset_on_return(ap.span, ap.raw, name));
        }
        Some((f, off)) => {
            let off = super::uprobe::parse_number(off)
                .filter(|_| !f.contains(['*', '?']) && !f.is_empty())
                .ok_or_else(|| diag::bad_attach_point(ap.span, ap.raw, &usage))?;
            (f, off)
        }
        None => (target, 0),
    };
    if !func
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'*' | b'?'))
    {
        return Err(diag::bad_attach_point(ap.span, ap.raw, &usage));
    }
    let wildcard = func.contains(['*', '?']) || module.is_some_and(|m| m.contains(['*', '?']));

    if kind.is_trampoline() != other {
        if offset != 0 {
            return Err(diag::bad_attach_point(
                ap.span,
                ap.raw,
                &format!(
                    "{name}:FUNCTION (this kernel has no kprobes, and fentry attaches at the entry only)"
                ),
            ));
        }
        let mode = if other {
            FentryMode::ForKprobe
        } else {
            FentryMode::Trampoline
        };
        return resolve_trampoline(ap, kernel, kind, name, module, func, wildcard, mode);
    }
    // fentry/fexit run as kprobe/kretprobe: typed by BTF when it has the function.
    let btf = if other { kernel.btf().ok() } else { None };

    let functions: Vec<KernelFunction> = if wildcard {
        let all = kernel
            .kernel_functions()
            .map_err(|e| diag::kernel_info(ap.span, &e))?;
        let matched: Vec<KernelFunction> = all
            .into_iter()
            .filter(|f| {
                glob_match(func, &f.name)
                    && match (module, &f.module) {
                        (None, _) => true,
                        (Some(m), Some(fm)) => glob_match(m, fm),
                        (Some(_), None) => false,
                    }
            })
            .collect();
        if matched.is_empty() {
            return Err(diag::no_probe_matches(ap.span, ap.raw));
        }
        let mut matched = matched;
        // A function listed once per module copy attaches once.
        matched.dedup_by(|a, b| a.name == b.name && a.module == b.module);
        matched
    } else {
        let wanted = KernelFunction {
            name: func.to_string(),
            module: module.map(String::from),
        };
        match kernel.kernel_functions() {
            Ok(all) => {
                let found = all.iter().any(|f| {
                    f.name == wanted.name && (module.is_none() || f.module == wanted.module)
                });
                if !found {
                    let known: Vec<&str> = all.iter().map(|f| f.name.as_str()).collect();
                    return Err(diag::kernel_function_not_found(ap.span, name, func, &known));
                }
            }
            // Without a list, the kernel itself says at attach time whether it exists.
            Err(KernelInfoError::Unavailable(_)) => {}
            Err(e) => return Err(diag::kernel_info(ap.span, &e)),
        }
        vec![wanted]
    };
    Ok(functions
        .into_iter()
        .map(|f| {
            let label = match offset {
                0 => f.qualified(),
                off => format!("{}+{off}", f.qualified()),
            };
            let context = match btf.and_then(|b| b.function(&f.name)) {
                Some(proto) => Context::Fentry {
                    exit: kind.is_return(),
                    func: f.name.clone(),
                    args: registers_format(&proto),
                    retval: proto
                        .ret
                        .as_ref()
                        .filter(|_| kind.is_return())
                        .map(|r| r.field(abi::arch::RETVAL_OFFSET)),
                    mode: FentryMode::Kprobe,
                },
                None => Context::Kprobe {
                    retprobe: kind.is_return(),
                    func: f.name.clone(),
                },
            };
            ResolvedProbe {
                provider: kind.provider().name,
                attach: abi::Attach::Kprobe {
                    func: f.name.clone(),
                    module: f.module.clone(),
                    offset,
                    retprobe: kind.is_return(),
                },
                section: if kind.is_return() {
                    "kretprobe"
                } else {
                    "kprobe"
                }
                .to_string(),
                name: format!("{name}:{label}"),
                context,
                short: f.name,
            }
        })
        .collect())
}

/// The parameters of `proto` where a kprobe finds them: parameter `i` in
/// the `struct pt_regs` slot of the `i`th argument register, at its BTF
/// width (x86_64 is little-endian, so a narrower value is the slot's low
/// bytes). Parameters past the sixth are on the stack and left out.
fn registers_format(proto: &ktypes::BtfFunction) -> ktypes::TracepointFormat {
    let mut format = proto.args_format();
    format.fields.truncate(abi::arch::ARG_OFFSETS.len());
    for (field, &offset) in format.fields.iter_mut().zip(&abi::arch::ARG_OFFSETS) {
        field.offset = offset;
    }
    format
}

#[allow(
    clippy::too_many_arguments,
    reason = "one call site, the parsed attach point"
)]
fn resolve_trampoline(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    kind: Kind,
    name: &str,
    module: Option<&str>,
    func: &str,
    wildcard: bool,
    mode: FentryMode,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    let btf = kernel
        .btf()
        .map_err(|e| diag::btf_function_not_found(ap.span, name, func, &e.to_string()))?;
    let funcs: Vec<String> = if wildcard {
        let matched: Vec<String> = btf
            .names_of(btf_kind::FUNC)
            .into_iter()
            .filter(|n| glob_match(func, n))
            .map(String::from)
            .collect();
        if matched.is_empty() {
            return Err(diag::no_probe_matches(ap.span, ap.raw));
        }
        matched
    } else {
        vec![func.to_string()]
    };
    let exit = kind.is_return();
    funcs
        .into_iter()
        .map(|f| {
            let proto = btf.function(&f).ok_or_else(|| {
                diag::btf_function_not_found(
                    ap.span,
                    name,
                    &f,
                    "the kernel's BTF has no function of that name",
                )
            })?;
            let retval = if exit {
                proto
                    .ret
                    .as_ref()
                    .map(|r| r.field(8 * proto.params.len() as u32))
            } else {
                None
            };
            let label = match module {
                Some(m) => format!("{m}:{f}"),
                None => f.clone(),
            };
            Ok(ResolvedProbe {
                provider: kind.provider().name,
                attach: abi::Attach::Fentry {
                    func: f.clone(),
                    exit,
                },
                section: format!("{}/{f}", if exit { "fexit" } else { "fentry" }),
                name: format!("{name}:{label}"),
                context: Context::Fentry {
                    exit,
                    func: f.clone(),
                    args: proto.args_format(),
                    retval,
                    mode,
                },
                short: f,
            })
        })
        .collect()
}

/// `-l` for kernel function probes: what the probe can attach through (the
/// mechanism it would run as, `crate::mechanism`):
///
/// - as a kprobe: the functions ftrace can patch (`available_filter_functions`,
///   else the text symbols of `/proc/kallsyms`);
/// - as fentry/fexit: the functions of the kernel's BTF; `-lv` prints each
///   parameter (`    struct file * file`) and the return value
///   (`    ssize_t retval`, for fentry too), as bpftrace does.
///
/// When neither works, nothing is listed and the error says why.
fn list(q: &ListQuery<'_>, kernel: &dyn KernelInfo) -> Result<Vec<String>, String> {
    let pattern = if q.pattern.is_empty() { "*" } else { q.pattern };
    let Some(written) = Written::of_provider(q.provider.name) else {
        return Ok(Vec::new());
    };
    let name = written.name();
    let features = kernel.tracing_features();
    let mechanism = match &features {
        Some(features) => choose(written, features, Usage::default()).mechanism,
        // Unknown features: list as written.
        None if matches!(written, Written::Kprobe | Written::Kretprobe) => Mechanism::Kprobe,
        None => Mechanism::Fentry,
    };
    match mechanism {
        Mechanism::Neither(why) => {
            let detail = features
                .as_ref()
                .and_then(|f| f.trampolines.why_not())
                .map(|why| format!("; BPF trampolines: {why}"))
                .unwrap_or_default();
            Err(format!(
                "error: this kernel cannot attach {name} probes, so none are listed: {why}{detail}"
            ))
        }
        Mechanism::Kprobe => list_kprobes(kernel, name, pattern),
        Mechanism::Fentry => {
            // Only fentry/fexit have named, typed arguments to show.
            let verbose = q.verbose && matches!(written, Written::Fentry | Written::Fexit);
            list_trampolines(kernel, name, pattern, verbose)
        }
    }
}

fn list_kprobes(kernel: &dyn KernelInfo, name: &str, pattern: &str) -> Result<Vec<String>, String> {
    let functions = kernel
        .kernel_functions()
        .map_err(|e| format!("error: cannot list kernel functions: {e}"))?;
    Ok(functions
        .into_iter()
        .map(|f| (f.qualified(), f))
        .filter(|(q, f)| glob_match(pattern, &f.name) || glob_match(pattern, q))
        .map(|(q, _)| format!("{name}:{q}"))
        .collect())
}

/// A function's parameters (and return value), as `-lv` prints them.
pub(super) fn function_lines(f: &BtfFunction, with_ret: bool, out: &mut Vec<String>) {
    for p in &f.params {
        out.push(format!("    {} {}", p.c_type, p.name));
    }
    if let (true, Some(r)) = (with_ret, &f.ret) {
        out.push(format!("    {} retval", r.c_type));
    }
}

fn list_trampolines(
    kernel: &dyn KernelInfo,
    name: &str,
    pattern: &str,
    verbose: bool,
) -> Result<Vec<String>, String> {
    let btf = kernel
        .btf()
        .map_err(|e| format!("error: cannot list {name} probes: {e}"))?;
    // bpftrace's current release lists `fentry:MODULE:FUNCTION`; weft reads
    // the kernel's own BTF, so the module is vmlinux.
    let pattern = match pattern.split_once(':') {
        Some((module, function)) if glob_match(module, "vmlinux") => function,
        Some(_) => return Ok(Vec::new()),
        None => pattern,
    };
    let names: Vec<&str> = if pattern.contains(['*', '?']) {
        btf.names_of(btf_kind::FUNC)
            .into_iter()
            .filter(|n| glob_match(pattern, n))
            .collect()
    } else {
        vec![pattern]
    };
    let mut out = Vec::new();
    for n in names {
        let Some(f) = btf.function(n) else { continue };
        out.push(format!("{name}:vmlinux:{n}"));
        if verbose {
            // fentry has no return value to show; fexit has `retval`.
            function_lines(&f, name == "fexit", &mut out);
        }
    }
    Ok(out)
}
