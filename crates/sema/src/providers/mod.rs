//! Probe providers: each one owns its attach-point grammar, the context its
//! programs receive and the program type it compiles to. The runtime half of
//! each provider lives in `runtime::attach`.

mod interval;
mod planned;
mod special;
mod tracepoint;

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
        other => return planned::canonical(other).map(ProviderKind::Planned),
    })
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
    match provider_kind(ap.provider) {
        Some(ProviderKind::Begin) => Ok(vec![special::begin()]),
        Some(ProviderKind::End) => Ok(vec![special::end()]),
        Some(ProviderKind::Tracepoint) => tracepoint::resolve(ap, kernel),
        Some(ProviderKind::Interval) => interval::resolve(ap).map(|p| vec![p]),
        Some(ProviderKind::Planned(name)) => Err(crate::diagnostics::provider_not_yet_supported(
            ap.span, name,
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
