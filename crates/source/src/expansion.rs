//! Where expanded code comes from: each macro expansion copies the macro's
//! body into a virtual region of the global offset space (above every file),
//! so every copy has spans of its own, and this table maps a region back to
//! the macro text it copies and the call that expanded it (which may itself
//! lie in another expansion). Like bpftrace's `location.h` parent chain, a
//! diagnostic inside expanded code then names the macro line and, for each
//! expansion it came through, the call: "expanded from here".

use crate::{Diagnostic, Diagnostics, Label, Span};

/// Where virtual regions start: far above any script's files.
pub const VIRTUAL_BASE: u32 = 0xC000_0000;

/// One expansion: the region `[base, base + origin.len()]` copies `origin`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    pub base: u32,
    /// The macro text copied (its whole definition).
    pub origin: Span,
    /// The call that expanded it (real or itself in a region).
    pub call_site: Span,
    /// The macro's name.
    pub name: String,
}

/// Every expansion of a compilation, in the order made (bases increasing).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expansions {
    regions: Vec<Expansion>,
}

impl Expansions {
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// A new region copying `origin`, expanded at `call_site`; its base.
    /// `None` when the virtual space is used up.
    pub fn add(&mut self, origin: Span, call_site: Span, name: &str) -> Option<u32> {
        let base = self.regions.last().map_or(Some(VIRTUAL_BASE), |r| {
            r.base.checked_add(r.origin.len() + 1)
        })?;
        base.checked_add(origin.len() + 1)?;
        self.regions.push(Expansion {
            base,
            origin,
            call_site,
            name: name.to_string(),
        });
        Some(base)
    }

    /// `span`, which lies in `origin`, as copied into the region at `base`.
    pub fn into_region(base: u32, origin: Span, span: Span) -> Span {
        let at = |o: u32| base + o.clamp(origin.start, origin.end) - origin.start;
        Span::new(at(span.start), at(span.end.max(span.start)))
    }

    fn region_of(&self, offset: u32) -> Option<&Expansion> {
        if offset < VIRTUAL_BASE {
            return None;
        }
        let i = self.regions.partition_point(|r| r.base <= offset);
        let r = &self.regions[i.checked_sub(1)?];
        (offset <= r.base + r.origin.len()).then_some(r)
    }

    /// The text `span` stands for, and the calls it was expanded through,
    /// innermost first (each a real span and the macro's name).
    pub fn resolve(&self, span: Span) -> (Span, Vec<(Span, String)>) {
        let mut chain = Vec::new();
        let real = self.resolve_into(span, &mut chain, 0);
        (real, chain)
    }

    fn resolve_into(&self, span: Span, chain: &mut Vec<(Span, String)>, depth: u32) -> Span {
        let Some(r) = self.region_of(span.start) else {
            return span;
        };
        let start = r.origin.start + (span.start - r.base);
        // A span joined across regions (rare) keeps only its start.
        let end = if span.end >= span.start && span.end <= r.base + r.origin.len() {
            r.origin.start + (span.end - r.base)
        } else {
            start
        };
        // Regions are made from calls that exist before them: the chain ends.
        if depth < 256 {
            let mut outer = Vec::new();
            let site = self.resolve_into(r.call_site, &mut outer, depth + 1);
            chain.push((site, r.name.clone()));
            chain.extend(outer);
        }
        Span::new(start, end)
    }

    /// Points a diagnostic's labels at the text they stand for and adds,
    /// for each expansion they came through, the call (once per call).
    pub fn fix(&self, d: &mut Diagnostic) {
        if self.regions.is_empty() {
            return;
        }
        let mut calls: Vec<Label> = Vec::new();
        for label in &mut d.labels {
            let (real, chain) = self.resolve(label.span);
            label.span = real;
            for (site, name) in chain {
                if !calls.iter().any(|c| c.span == site) {
                    calls.push(Label {
                        span: site,
                        message: format!("expanded from this use of `{name}`"),
                        primary: false,
                    });
                }
            }
        }
        calls.retain(|c| !d.labels.iter().any(|l| l.span == c.span));
        d.labels.extend(calls);
    }

    pub fn fix_all(&self, ds: &mut Diagnostics) {
        if self.regions.is_empty() {
            return;
        }
        for d in ds.iter_mut() {
            self.fix(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_in_nested_expansions_resolve_to_the_macro_text_and_each_call() {
        let mut x = Expansions::default();
        // macro a at 10..30 called at 100..105; inside it, macro b (40..60)
        // is called at a's 20..24.
        let a = x.add(Span::new(10, 30), Span::new(100, 105), "a").unwrap();
        let call_b = Expansions::into_region(a, Span::new(10, 30), Span::new(20, 24));
        let b = x.add(Span::new(40, 60), call_b, "b").unwrap();
        let inner = Expansions::into_region(b, Span::new(40, 60), Span::new(45, 47));
        let (real, chain) = x.resolve(inner);
        assert_eq!(real, Span::new(45, 47));
        assert_eq!(
            chain,
            vec![
                (Span::new(20, 24), "b".to_string()),
                (Span::new(100, 105), "a".to_string())
            ]
        );
        assert_eq!(x.resolve(Span::new(5, 6)), (Span::new(5, 6), vec![]));
    }
}
