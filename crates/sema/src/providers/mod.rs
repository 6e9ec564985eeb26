//! Probe providers: each one owns its attach-point grammar, the context its
//! programs receive and the program type it compiles to. The runtime half of
//! each provider lives in `runtime::attach`.

mod hardware;
mod interval;
pub(crate) mod kprobe;
mod missing;
mod perf_event;
mod planned;
mod profile;
pub mod rawtracepoint;
mod software;
mod special;
mod tracepoint;
mod uprobe;
mod usdt;
pub mod userbin;

pub(crate) use missing::resolve_list;

use ktypes::{KernelInfo, TracepointFormat};
use source::{Diagnostic, Span};

/// An attach point as the parser saw it.
#[derive(Clone, Debug)]
pub struct AttachPointRef<'a> {
    /// The whole attach point as written (`tracepoint:syscalls:sys_enter_*`).
    pub raw: &'a str,
    /// The provider as written, possibly an alias (`t`).
    pub provider: &'a str,
    /// The `:`-separated parts after the provider.
    pub parts: &'a [String],
    pub span: Span,
}

/// What a program's context pointer points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Context {
    /// Nothing usable (BEGIN/END run by user space, perf events without sample data).
    None,
    /// A tracepoint record: `args->field` reads it.
    Tracepoint(TracepointFormat),
    /// uprobe/uretprobe: the thread's `struct pt_regs`; `func` is the probed function.
    Uprobe { retprobe: bool, func: String },
    /// usdt: `struct pt_regs` at the probe site, and where each argument is.
    Usdt { args: Vec<uelf::UsdtArg> },
    /// A completed instance of stream N (a `stream:NAME` handler): `args->field`
    /// reads the instance's record.
    Stream(usize),
    /// kprobe/kretprobe: the kernel's `struct pt_regs`; `func` is the probed function.
    Kprobe { retprobe: bool, func: String },
    /// fentry/fexit: the function's arguments as an array of u64, described
    /// by its BTF prototype (`args->NAME`); fexit's `retval` follows them.
    ///
    /// `mode` says how it runs: the field offsets of `args` and `retval` are
    /// where the values sit in the context of the program actually loaded.
    Fentry {
        exit: bool,
        func: String,
        args: TracepointFormat,
        retval: Option<ktypes::TpField>,
        mode: FentryMode,
    },
    /// rawtracepoint: the raw u64 arguments (`argN`), named and typed from BTF
    /// when the kernel has it (`args->NAME`).
    RawTracepoint { args: Option<TracepointFormat> },
}

impl Context {
    /// The record `args->NAME` reads, in contexts that have one.
    pub fn args_format(&self) -> Option<&TracepointFormat> {
        match self {
            Context::Tracepoint(f)
            | Context::Fentry { args: f, .. }
            | Context::RawTracepoint { args: Some(f) } => Some(f),
            _ => None,
        }
    }
}

/// How a kernel function probe typed by BTF runs (`sema::mechanism` chooses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FentryMode {
    /// fentry/fexit as written: a BPF trampoline; parameter `i` is the u64
    /// at `8 * i` of the context, fexit's `retval` the u64 after them.
    Trampoline,
    /// fentry/fexit written, run as kprobe/kretprobe (no trampolines): each
    /// parameter is read from its argument register's slot in `struct
    /// pt_regs` (`abi::arch`), `retval` from rax. Only the parameters passed
    /// in registers are in `args`.
    Kprobe,
    /// kprobe/kretprobe written, run as fentry/fexit (no kprobes): `argN`
    /// is the Nth BTF parameter, `retval` the typed return value.
    ForKprobe,
}

/// One concrete probe a program is made for (wildcards already expanded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedProbe {
    pub attach: abi::Attach,
    /// ELF section that tells libbpf the program type.
    pub section: String,
    /// The probe written out in full, as `probe` prints it (`tracepoint:syscalls:sys_enter_read`).
    pub name: String,
    pub context: Context,
    /// Short name used in the program's symbol (`sys_enter_read`).
    pub short: String,
}

/// The kinds of probe weft knows, by canonical name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderKind {
    Begin,
    End,
    Tracepoint,
    Interval,
    Uprobe,
    Uretprobe,
    Usdt,
    Profile,
    Software,
    Hardware,
    Kprobe,
    Kretprobe,
    Fentry,
    Fexit,
    RawTracepoint,
    /// Parsed and recognised, but implemented by a later milestone.
    Planned(&'static str),
}

/// Canonical provider for a name or alias as written, or `None` if unknown.
pub fn provider_kind(name: &str) -> Option<ProviderKind> {
    Some(match name {
        "BEGIN" | "begin" => ProviderKind::Begin,
        "END" | "end" => ProviderKind::End,
        "tracepoint" | "t" => ProviderKind::Tracepoint,
        "interval" | "i" => ProviderKind::Interval,
        "uprobe" | "u" => ProviderKind::Uprobe,
        "uretprobe" | "ur" => ProviderKind::Uretprobe,
        "usdt" | "U" => ProviderKind::Usdt,
        "profile" | "p" => ProviderKind::Profile,
        "software" | "s" => ProviderKind::Software,
        "hardware" | "h" => ProviderKind::Hardware,
        "kprobe" | "k" => ProviderKind::Kprobe,
        "kretprobe" | "kr" => ProviderKind::Kretprobe,
        "kfunc" | "fentry" | "f" => ProviderKind::Fentry,
        "kretfunc" | "fexit" | "fr" => ProviderKind::Fexit,
        "rawtracepoint" | "rt" => ProviderKind::RawTracepoint,
        other => return planned::canonical(other).map(ProviderKind::Planned),
    })
}

/// The events of `software` (`hardware: false`) or `hardware` probes, as
/// `(name, alias)`, for `-l`; the alias is empty when there is none.
pub fn perf_events(hardware: bool) -> Vec<(&'static str, &'static str)> {
    let table = if hardware {
        hardware::EVENTS
    } else {
        software::EVENTS
    };
    table.iter().map(|e| (e.name, e.alias)).collect()
}

/// One name for each probe type weft compiles (the first of its names in
/// [`all_provider_names`]), for the help of a planned one.
pub fn compiled_provider_names() -> Vec<&'static str> {
    let mut kinds = Vec::new();
    let mut names = Vec::new();
    for name in all_provider_names() {
        match provider_kind(name) {
            Some(ProviderKind::Planned(_)) | None => {}
            Some(kind) if !kinds.contains(&kind) => {
                kinds.push(kind);
                names.push(name);
            }
            Some(_) => {}
        }
    }
    names
}

/// Every provider name and alias, for "did you mean" help.
pub fn all_provider_names() -> Vec<&'static str> {
    let mut v = vec![
        "BEGIN",
        "END",
        "begin",
        "end",
        "tracepoint",
        "t",
        "interval",
        "i",
        "uprobe",
        "u",
        "uretprobe",
        "ur",
        "usdt",
        "U",
        "profile",
        "p",
        "software",
        "s",
        "hardware",
        "h",
        "kprobe",
        "k",
        "kretprobe",
        "kr",
        "fentry",
        "kfunc",
        "f",
        "fexit",
        "kretfunc",
        "fr",
        "rawtracepoint",
        "rt",
    ];
    v.extend(
        planned::NAMES
            .iter()
            .flat_map(|(names, _)| names.iter().copied()),
    );
    v
}

/// Resolves one attach point to the probes it names.
pub fn resolve(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    resolve_for(ap, kernel, None)
}

/// [`resolve`] for `-p PID`: user-space probes attach to that process only
/// and find libraries among the files it has mapped.
pub fn resolve_for(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    pid: Option<u32>,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    match provider_kind(ap.provider) {
        Some(ProviderKind::Uprobe) => uprobe::resolve(ap, kernel, pid, false),
        Some(ProviderKind::Uretprobe) => uprobe::resolve(ap, kernel, pid, true),
        Some(ProviderKind::Usdt) => usdt::resolve(ap, kernel, pid),
        Some(ProviderKind::Begin) => Ok(vec![special::begin()]),
        Some(ProviderKind::End) => Ok(vec![special::end()]),
        Some(ProviderKind::Tracepoint) => tracepoint::resolve(ap, kernel),
        Some(ProviderKind::Interval) => interval::resolve(ap).map(|p| vec![p]),
        Some(ProviderKind::Profile) => profile::resolve(ap).map(|p| vec![p]),
        Some(ProviderKind::Software) => software::resolve(ap).map(|p| vec![p]),
        Some(ProviderKind::Hardware) => hardware::resolve(ap).map(|p| vec![p]),
        Some(ProviderKind::Kprobe) => kprobe::resolve(ap, kernel, kprobe::Kind::Kprobe),
        Some(ProviderKind::Kretprobe) => kprobe::resolve(ap, kernel, kprobe::Kind::Kretprobe),
        Some(ProviderKind::Fentry) => kprobe::resolve(ap, kernel, kprobe::Kind::Fentry),
        Some(ProviderKind::Fexit) => kprobe::resolve(ap, kernel, kprobe::Kind::Fexit),
        Some(ProviderKind::RawTracepoint) => rawtracepoint::resolve(ap, kernel),
        Some(ProviderKind::Planned(name)) => Err(crate::diagnostics::provider_not_yet_supported(
            ap.span,
            name,
            &compiled_provider_names(),
        )),
        None => Err(crate::diagnostics::unknown_provider(
            ap.span,
            ap.provider,
            &all_provider_names(),
        )),
    }
}

/// `*` matches any run of characters; everything else matches itself.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if pi < p.len() && (p[pi] == t[ti] || p[pi] == b'?') {
            pi += 1;
            ti += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob() {
        assert!(glob_match("sys_enter_*", "sys_enter_read"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(!glob_match("a*b", "axxc"));
        assert!(glob_match("sys_?nter_read", "sys_enter_read"));
        assert!(!glob_match("read", "reads"));
    }
}
