//! `-k` / `-kk`: failed helper calls, reported with the script line that
//! made them. The first failure of each call site is shown as a warning
//! with the line and a caret; every failure is counted, and the counts
//! come at exit (bpftrace repeats the warning each time, which floods a
//! terminal at event rates).

use abi::{HelperErrorSite, Manifest};
use source::{Diagnostic, SourceMap, Span, render};

/// Failures seen so far, by call site.
pub struct HelperErrors<'s> {
    sources: &'s SourceMap,
    counts: Vec<u64>,
}

impl<'s> HelperErrors<'s> {
    pub fn new(sources: &'s SourceMap, manifest: &Manifest) -> HelperErrors<'s> {
        HelperErrors {
            sources,
            counts: vec![0; manifest.helper_sites.len()],
        }
    }

    /// One failure of call site `site` (`error`: the helper's negative errno).
    pub fn failed(&mut self, manifest: &Manifest, site: usize, error: i64) {
        let (Some(spec), Some(count)) =
            (manifest.helper_sites.get(site), self.counts.get_mut(site))
        else {
            return;
        };
        *count += 1;
        if *count == 1 {
            crate::status::clear_for_stderr();
            eprint!("{}", render(&warning(spec, error), self.sources));
        }
    }

    /// At exit: how often each call site failed, where it failed more than once.
    pub fn summary(&self, manifest: &Manifest) -> Vec<String> {
        manifest
            .helper_sites
            .iter()
            .zip(&self.counts)
            .filter(|(_, n)| **n > 1)
            .map(|(site, n)| {
                format!(
                    "weft: {} failed {n} times in all at {} (in {})",
                    site.helper,
                    location(self.sources, site),
                    site.probe
                )
            })
            .collect()
    }
}

fn span(site: &HelperErrorSite) -> Span {
    Span::new(site.span.0, site.span.1)
}

/// `file:line:col` of a call site.
fn location(sources: &SourceMap, site: &HelperErrorSite) -> String {
    match sources.file_of(site.span.0) {
        Some(file) => {
            let (line, col) = file.line_col(site.span.0);
            format!("{}:{line}:{col}", file.name)
        }
        None => "an unknown place".to_string(),
    }
}

/// The warning for a failed call in bpftrace's words: what failed (a full
/// map, a missing element, else the error as the kernel's errno names it),
/// then `Additional Info - helper: NAME, retcode: N`; the probe in a note.
fn warning(site: &HelperErrorSite, error: i64) -> Diagnostic {
    let errno = i32::try_from(-error).unwrap_or(0);
    let kind = std::io::Error::from_raw_os_error(errno).kind();
    let what = match (site.helper.as_str(), kind) {
        ("map_update_elem", std::io::ErrorKind::ArgumentListTooLong) => "Map full; can't update element. Try increasing max_map_keys config or manually setting the max entries in a map declaration e.g. `let @a = hash(5000)`".to_string(),
        ("map_delete_elem", std::io::ErrorKind::NotFound) => {
            "Can't delete map element because it does not exist.".to_string()
        }
        ("map_lookup_elem", _) => "Can't lookup map element because it does not exist.".to_string(),
        _ => crate::run_error::io_reason(&std::io::Error::from_raw_os_error(errno)),
    };
    Diagnostic::warning(format!(
        "{what}\nAdditional Info - helper: {}, retcode: {error}",
        site.helper
    ))
    .with_label(span(site), "")
    .with_note(format!("in {}", site.probe))
}
