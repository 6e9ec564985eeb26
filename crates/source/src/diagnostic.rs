//! Diagnostics: what went wrong, where, and what to do about it.
//!
//! A [`Diagnostic`] is plain data built with chained methods; [`render`]
//! turns it into compiler-style text against a [`SourceMap`].

use crate::{Code, SourceMap, Span};
use std::fmt::Write as _;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The program is rejected.
    Error,
    /// The program is accepted, but probably not what was meant.
    Warning,
}

impl Severity {
    /// The lowercase word used in rendered output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A span of source with a message; `primary` labels get `^^^`, others `---`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    pub primary: bool,
}

/// One error or warning with its source labels, notes and help lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Its stable code (`E0001`), if the diagnostic has one.
    pub code: Option<Code>,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Vec<String>,
}

impl Diagnostic {
    /// A diagnostic of the given severity with no labels.
    pub fn new(severity: Severity, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            code: None,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
        }
    }

    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, message)
    }

    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, message)
    }

    pub fn with_code(mut self, code: Code) -> Diagnostic {
        self.code = Some(code);
        self
    }

    /// Adds the primary label (the `^^^` one). Several primaries are allowed.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: true,
        });
        self
    }

    /// Adds a secondary label (underlined with `---`).
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help.push(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The span of the first primary label, else of the first label.
    pub fn primary_span(&self) -> Option<Span> {
        self.labels
            .iter()
            .find(|l| l.primary)
            .or(self.labels.first())
            .map(|l| l.span)
    }
}

/// An ordered collection of diagnostics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.items.push(diagnostic);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(Diagnostic::is_error)
    }

    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.is_error()).count()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.items.iter()
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Diagnostic> {
        self.items.iter_mut()
    }

    pub fn as_slice(&self) -> &[Diagnostic] {
        &self.items
    }

    /// Stable sort by primary position; label-less diagnostics go first.
    pub fn sort_by_position(&mut self) {
        self.items
            .sort_by_key(|d| d.primary_span().map(|s| (s.start, s.end)));
    }
}

impl Extend<Diagnostic> for Diagnostics {
    fn extend<I: IntoIterator<Item = Diagnostic>>(&mut self, iter: I) {
        self.items.extend(iter);
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl FromIterator<Diagnostic> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Diagnostics {
        Diagnostics {
            items: iter.into_iter().collect(),
        }
    }
}

/// Tab stops used when rendering source lines.
const TAB_WIDTH: usize = 4;

/// Renders every diagnostic, separated by blank lines.
pub fn render_all<'a>(
    diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
    map: &SourceMap,
) -> String {
    let parts: Vec<String> = diagnostics.into_iter().map(|d| render(d, map)).collect();
    parts.join("\n")
}

/// Renders one diagnostic as plain compiler-style text, ending in a newline.
pub fn render(diagnostic: &Diagnostic, map: &SourceMap) -> String {
    let mut out = String::new();
    let header = match diagnostic.code {
        Some(code) => format!("{}[{code}]", diagnostic.severity.as_str()),
        None => diagnostic.severity.as_str().to_string(),
    };
    let primary = diagnostic
        .primary_span()
        .and_then(|span| map.file_of(span.start).map(|file| (file, span)));
    match primary {
        Some((file, span)) => {
            let (line, col) = file.line_col(span.start);
            let _ = writeln!(
                out,
                "{}:{line}:{col}: {header}: {}",
                file.name, diagnostic.message
            );
        }
        None => {
            let _ = writeln!(out, "weft: {header}: {}", diagnostic.message);
        }
    }

    // One source excerpt per label, in source order; labels outside any file are skipped.
    let mut labels: Vec<&Label> = diagnostic
        .labels
        .iter()
        .filter(|l| map.file_of(l.span.start).is_some())
        .collect();
    labels.sort_by_key(|l| (l.span.start, !l.primary));
    let max_line = labels
        .iter()
        .map(|l| {
            map.file_of(l.span.start)
                .map_or(1, |f| f.line_col(l.span.start).0)
        })
        .max()
        .unwrap_or(1);
    let gutter = max_line.to_string().len();
    let pad = " ".repeat(gutter);

    if !labels.is_empty() {
        let _ = writeln!(out, "{pad} |");
    }
    let mut last_line: Option<(u32, usize)> = None;
    for label in &labels {
        let Some(file) = map.file_of(label.span.start) else {
            continue;
        };
        let (line, _) = file.line_col(label.span.start);
        let text = file.line_text(line);
        if let Some((base, prev)) = last_line
            && base == file.base
            && prev + 1 < line
        {
            let _ = writeln!(out, "{pad} ...");
        }
        if last_line != Some((file.base, line)) {
            let source_line = format!("{line:>gutter$} | {}", expand_tabs(text));
            let _ = writeln!(out, "{}", source_line.trim_end());
        }
        last_line = Some((file.base, line));

        // Columns are display columns of the line with tabs expanded.
        let range = file.local_range(label.span);
        let line_off = line_offset(&file.text, range.start);
        let start_in_line = range.start - line_off;
        let end_in_line = (range.end - line_off).min(text.len()).max(start_in_line);
        let start_col = display_width(&text[..start_in_line.min(text.len())]);
        let end_col = display_width(&text[..end_in_line]);
        let width = end_col.saturating_sub(start_col).max(1);
        let mark = if label.primary { "^" } else { "-" };
        let underline = mark.repeat(width);
        let msg = if label.message.is_empty() {
            String::new()
        } else {
            format!(" {}", label.message)
        };
        let _ = writeln!(out, "{pad} | {}{underline}{msg}", " ".repeat(start_col));
    }
    for help in &diagnostic.help {
        let _ = writeln!(out, "{pad} = help: {help}");
    }
    for note in &diagnostic.notes {
        let _ = writeln!(out, "{pad} = note: {note}");
    }
    out
}

/// File-relative offset of the start of the line containing `offset`.
fn line_offset(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// Display width of a line prefix: tabs advance to the next tab stop, other chars count one.
fn display_width(prefix: &str) -> usize {
    prefix.chars().fold(0, |col, c| {
        if c == '\t' {
            col + TAB_WIDTH - col % TAB_WIDTH
        } else {
            col + 1
        }
    })
}

fn expand_tabs(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut col = 0;
    for c in line.chars() {
        if c == '\t' {
            let n = TAB_WIDTH - col % TAB_WIDTH;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            out.push(c);
            col += 1;
        }
    }
    out
}
