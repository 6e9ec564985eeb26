//! Probe providers as units: each probe type is a [`ProviderDef`] in a
//! module here, holding its names and aliases, its attach-point grammar and
//! resolution into concrete probes (the context its programs receive and
//! the program type they compile to), what `-l` lists for it, and whether
//! `-p PID` filters its events. [`PROVIDERS`] is the table everything reads:
//! the checker, `-l`/`-lv`, `--info`, codegen's pid filter and "did you mean".
//!
//! The runtime half is by mechanism, not by provider (`abi::Attach`,
//! `runtime::attach`): a probe type that reuses a mechanism (as `profile`
//! reuses the software perf event) is one file here and one line in
//! `providers!` below.

pub mod debuginfo;
mod listing;
mod missing;
mod perf_event;
mod placement;
mod planned;
pub mod userbin;

pub use listing::list_program;
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
    /// Resolve even where weft cannot vouch that a uprobe's place is safe:
    /// `--unsafe`, after the checked resolution refused it
    /// ([`placement::unsafe_placement`]).
    pub unchecked: bool,
}

/// What a program's context pointer points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Context {
    /// Nothing usable (BEGIN/END run by user space, perf events without sample data).
    None,
    /// A tracepoint record: `args->field` reads it (one copy shared by
    /// every probe of the tracepoint).
    Tracepoint(std::sync::Arc<TracepointFormat>),
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
    /// `iter:TARGET`: `ctx` points to the kernel's `struct bpf_iter__TARGET`,
    /// whose second field is the object visited (NULL in the last call).
    Iter { target: String },
}

impl Context {
    /// The record `args->NAME` reads, in contexts that have one.
    pub fn args_format(&self) -> Option<&TracepointFormat> {
        match self {
            Context::Tracepoint(f) => Some(f),
            Context::Fentry { args: f, .. } | Context::RawTracepoint { args: Some(f) } => Some(f),
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
    /// The canonical name of its provider ([`ProviderDef::name`]).
    pub provider: &'static str,
    pub attach: abi::Attach,
    /// ELF section that tells libbpf the program type.
    pub section: String,
    /// The probe written out in full, as `probe` prints it (`tracepoint:syscalls:sys_enter_read`).
    pub name: String,
    pub context: Context,
    /// Short name used in the program's symbol (`sys_enter_read`).
    pub short: String,
}

impl ResolvedProbe {
    /// It loads as a BTF-typed tracing program (`BPF_PROG_TYPE_TRACING`),
    /// the only kind the kernel gives some helpers to (`bpf_skb_output`,
    /// `bpf_get_socket_cookie` on a `struct sock *`).
    pub fn is_tracing_program(&self) -> bool {
        ["fentry/", "fexit/", "tp_btf/", "iter/"]
            .iter()
            .any(|p| self.section.starts_with(p))
    }
}

/// A probe type: everything weft knows about it, in one place.
pub struct ProviderDef {
    /// The canonical name (`kprobe`).
    pub name: &'static str,
    /// Other names it is written as (`k`), bpftrace's included.
    pub aliases: &'static [&'static str],
    /// How its attach points are written, for help and `--info`.
    pub usage: &'static str,
    /// What it probes, in a sentence.
    pub help: &'static str,
    /// Resolves an attach point into the concrete probes it names (`pid`:
    /// `-p PID`, for user-space probes).
    pub resolve: Resolve,
    /// What `-l NAME:PATTERN` prints; `None` when it cannot list yet.
    pub list: Option<List>,
    /// Whether a search that does not name the probe type (`-l`,
    /// `-l '*sleep*'`, `-l '*:vfs_*'`) lists it too.
    pub listed_by: Listed,
    /// `-p PID` limits its events to that process (not BEGIN, END or
    /// interval, which fire in no process of their own).
    pub pid_filter: bool,
    /// What the kernel must have to run it, for `--info`.
    pub needs: Needs,
}

/// A provider's resolution of an attach point (`pid`: `-p PID`).
pub type Resolve =
    fn(&AttachPointRef<'_>, &dyn KernelInfo, Option<u32>) -> Result<Vec<ResolvedProbe>, Diagnostic>;

/// A provider's `-l` listing: the lines to print (a probe, then under
/// `-lv` its arguments, indented), or what to say instead after `weft: `.
pub type List = fn(&ListQuery<'_>, &dyn KernelInfo) -> Result<Vec<String>, String>;

/// One `-l` request to a provider.
pub struct ListQuery<'a> {
    /// The provider listed (a family shares one listing: `kprobe`, `kretprobe`).
    pub provider: &'static ProviderDef,
    /// What follows `PROVIDER:` (`*:PATTERN` for a search without one).
    pub pattern: &'a str,
    /// `-lv`: with arguments.
    pub verbose: bool,
    /// `-p PID`: user-space probes of that process (its executable and the
    /// libraries it has mapped).
    pub pid: Option<u32>,
}

/// Which searches list a probe type, as bpftrace's `-l` has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listed {
    /// Only a search that names it (`-l 'interval:*'`).
    Named,
    /// Any search (`-l`, `-l '*sleep*'`): the kernel's probes.
    Kernel,
    /// A search that names it, or one scoped to a process (`-p PID`) or to
    /// an existing file (`-l '*:./app:*'`): user-space probes.
    User,
}

/// What a probe type needs of the kernel (`--info` says whether it has it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing beyond BPF itself (BEGIN, END, raw tracepoints, uprobes).
    Bpf,
    /// tracefs, where tracepoint formats and ids are read.
    Tracefs,
    /// kprobes or BPF trampolines (`sema::mechanism` picks one).
    KernelFunctions,
    /// Software perf events (timers).
    PerfSoftware,
    /// A CPU PMU (hardware perf events).
    HardwarePmu,
    /// BTF-typed raw tracepoints (`tp_btf`).
    TpBtf,
}

/// Declares each provider's module and the table:
/// `module: DEF, ...;` (a module may define a family, as kprobe's four).
macro_rules! providers {
    ($($module:ident: $($def:ident),+;)*) => {
        $(pub mod $module;)*
        /// Every probe type weft compiles, in the order help lists them.
        pub static PROVIDERS: &[&ProviderDef] = &[$($(&$module::$def,)+)*];
    };
}

providers! {
    special: BEGIN, END;
    self_signal: DEF;
    bench: DEF;
    tracepoint: DEF;
    interval: DEF;
    uprobe: UPROBE, URETPROBE;
    usdt: DEF;
    iter: DEF;
    profile: DEF;
    software: DEF;
    hardware: DEF;
    kprobe: KPROBE, KRETPROBE, FENTRY, FEXIT;
    rawtracepoint: DEF, TP_BTF;
}

/// The provider a name or alias as written denotes.
pub fn provider_def(name: &str) -> Option<&'static ProviderDef> {
    PROVIDERS
        .iter()
        .copied()
        .find(|p| p.name == name || p.aliases.contains(&name))
}

/// The events of `software` (`hardware: false`) or `hardware` probes, as
/// `(name, alias)`; the alias is empty when there is none.
pub fn perf_events(hardware: bool) -> Vec<(&'static str, &'static str)> {
    let table = if hardware {
        hardware::EVENTS
    } else {
        software::EVENTS
    };
    table.iter().map(|e| (e.name, e.alias)).collect()
}

/// One name for each probe type weft compiles, for the help of a planned one.
pub fn compiled_provider_names() -> Vec<&'static str> {
    PROVIDERS.iter().map(|p| p.name).collect()
}

/// Every provider name and alias, planned ones included, for "did you mean" help.
pub fn all_provider_names() -> Vec<&'static str> {
    let mut v: Vec<&str> = PROVIDERS
        .iter()
        .flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied()))
        .collect();
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
    if let Some(def) = provider_def(ap.provider) {
        return (def.resolve)(ap, kernel, pid);
    }
    Err(match planned::canonical(ap.provider) {
        Some(name) => crate::diagnostics::provider_not_yet_supported(
            ap.span,
            name,
            &compiled_provider_names(),
        ),
        None => crate::diagnostics::unknown_provider(ap.span, ap.provider, &all_provider_names()),
    })
}

/// The canonical name of a probe type weft recognises but does not compile yet.
pub fn planned_provider(name: &str) -> Option<&'static str> {
    planned::canonical(name)
}

/// Whether `-p PID` limits the events of a probe of this provider.
pub fn pid_filter_applies(provider: &str) -> bool {
    provider_def(provider).is_some_and(|p| p.pid_filter)
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
