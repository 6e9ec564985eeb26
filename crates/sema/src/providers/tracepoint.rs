//! `tracepoint:category:name` (alias `t`), with `*` wildcards in either part.
//! The context is the tracepoint's record, laid out by its tracefs `format` file.

use ktypes::{KernelInfo, KernelInfoError};
use source::Diagnostic;

use super::{AttachPointRef, Context, ResolvedProbe, glob_match};
use crate::diagnostics as diag;

pub fn resolve(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
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
                .tracepoint_format(&category, &name)
                .map_err(|e| match e {
                    KernelInfoError::NotFound(_) => {
                        diag::tracepoint_not_found(ap.span, &category, &name)
                    }
                    other => diag::kernel_info(ap.span, &other),
                })?;
            Ok(ResolvedProbe {
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
