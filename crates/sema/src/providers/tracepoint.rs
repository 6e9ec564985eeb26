//! `tracepoint:category:name` (alias `t`), with `*` wildcards in either part.
//! The context is the tracepoint's record, laid out by its tracefs `format` file.

use ktypes::{KernelInfo, KernelInfoError};
use source::Diagnostic;

use super::{AttachPointRef, Context, ListQuery, Needs, ProviderDef, ResolvedProbe, glob_match};
use crate::diagnostics as diag;

pub const DEF: ProviderDef = ProviderDef {
    name: "tracepoint",
    aliases: &["t"],
    usage: "tracepoint:CATEGORY:NAME",
    help: "a kernel tracepoint; args->FIELD reads its record (weft -lv lists the fields)",
    resolve,
    list: Some(list),
    listed_by: super::Listed::Kernel,
    pid_filter: true,
    needs: Needs::Tracefs,
};

pub fn resolve(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    _pid: Option<u32>,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    let [category, name] = ap.parts else {
        return Err(diag::bad_attach_point(
            ap.span,
            ap.raw,
            "tracepoint:CATEGORY:NAME",
        ));
    };
    let pairs: Vec<(String, String)> = if category.contains(['*', '?']) || name.contains(['*', '?'])
    {
        let all = kernel
            .tracepoints()
            .map_err(|e| diag::kernel_info(ap.span, &e))?;
        let matched: Vec<_> = all
            .into_iter()
            .filter(|(c, n)| glob_match(category, c) && glob_match(name, n))
            .collect();
        if matched.is_empty() {
            return Err(diag::no_probe_matches(ap.span, ap.raw));
        }
        matched
    } else {
        vec![(category.clone(), name.clone())]
    };
    pairs
        .into_iter()
        .map(|(category, name)| {
            let format = kernel
                .tracepoint_format_shared(&category, &name)
                .map_err(|e| match e {
                    KernelInfoError::NotFound(_) => {
                        // On this error path only: what exists, for the hint.
                        let known = kernel.tracepoints().unwrap_or_default();
                        diag::tracepoint_not_found(ap.span, &category, &name, &known)
                    }
                    other => diag::kernel_info(ap.span, &other),
                })?;
            Ok(ResolvedProbe {
                provider: DEF.name,
                attach: abi::Attach::Tracepoint {
                    category: category.clone(),
                    name: name.clone(),
                },
                section: format!("tracepoint/{category}/{name}"),
                name: format!("tracepoint:{category}:{name}"),
                context: Context::Tracepoint(format),
                short: name,
            })
        })
        .collect()
}

/// `-l 'tracepoint:CATEGORY:NAME'` (wildcards in both; `NAME` alone is
/// `*:NAME`, as bpftrace has it): each tracepoint, sorted, and under `-lv`
/// its fields.
fn list(q: &ListQuery<'_>, kernel: &dyn KernelInfo) -> Result<Vec<String>, String> {
    let pattern = match q.pattern {
        "" => "*:*".to_string(),
        p if !p.contains(':') => format!("*:{p}"),
        p => p.to_string(),
    };
    let mut tracepoints = kernel
        .tracepoints()
        .map_err(|e| format!("error: cannot list tracepoints: {e}"))?;
    tracepoints.sort();
    let mut out = Vec::new();
    for (category, name) in tracepoints {
        let full = format!("{category}:{name}");
        if !glob_match(&pattern, &full) {
            continue;
        }
        out.push(format!("tracepoint:{full}"));
        if q.verbose
            && let Ok(format) = kernel.tracepoint_format(&category, &name)
        {
            for f in &format.fields {
                let array = match f.kind {
                    ktypes::FieldKind::Array { len } => format!("[{len}]"),
                    _ => String::new(),
                };
                out.push(format!("    {} {}{array}", f.c_type, f.name));
            }
        }
    }
    Ok(out)
}
