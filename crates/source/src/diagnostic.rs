//! Diagnostics: what went wrong, where, and what to do about it.
//!
//! A [`Diagnostic`] is plain data built with chained methods; [`render`]
//! turns it into text in bpftrace's form against a [`SourceMap`].

use crate::{Code, SourceFile, SourceMap, Span};
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
    /// The first line has no place (`ERROR: message`), as bpftrace reports
    /// what it finds only when it attaches; the source excerpt still shows
    /// where.
    pub bare_header: bool,
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
            bare_header: false,
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

    /// Renders the first line without its place (`ERROR: message`).
    pub fn with_bare_header(mut self) -> Diagnostic {
        self.bare_header = true;
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

/// A tab in a source line is shown as this many spaces, as bpftrace shows it.
const TAB_WIDTH: usize = 4;

/// Renders every diagnostic, separated by blank lines.
pub fn render_all<'a>(
    diagnostics: impl IntoIterator<Item = &'a Diagnostic>,
    map: &SourceMap,
) -> String {
    let parts: Vec<String> = diagnostics.into_iter().map(|d| render(d, map)).collect();
    parts.join("\n")
}

/// Renders one diagnostic in bpftrace's words, ending in a newline.
///
/// The first line is bpftrace's (`stdin:1:15-35: ERROR: message`, columns
/// 1-based with an exclusive end; `stdin:2-4:` for a span over several lines;
/// `ERROR: message` without a place), so what users and scripts grep for in
/// bpftrace's output is found in weft's. The source line follows as it is
/// (tabs as four spaces) with the span underlined in `~`, as bpftrace shows
/// it (a span over several lines: its first line, underlined to the end);
/// weft adds each label's message after its underline, secondary labels
/// underlined in `-`, `HINT:` lines for help, `NOTE:` lines, and the stable
/// code last (`CODE: E0404`).
pub fn render(diagnostic: &Diagnostic, map: &SourceMap) -> String {
    let mut out = String::new();
    let tag = match diagnostic.severity {
        Severity::Error => "ERROR",
        Severity::Warning => "WARNING",
    };
    let primary = diagnostic
        .primary_span()
        .filter(|_| !diagnostic.bare_header)
        .and_then(|span| map.file_of(span.start).map(|file| (file, span)));
    match primary {
        Some((file, span)) => {
            let _ = writeln!(
                out,
                "{}:{}: {tag}: {}",
                file.name,
                location(file, span),
                diagnostic.message
            );
        }
        None => {
            let _ = writeln!(out, "{tag}: {}", diagnostic.message);
        }
    }

    // The labels' lines in source order, each line once; labels outside any
    // file are skipped.
    let mut labels: Vec<&Label> = diagnostic
        .labels
        .iter()
        .filter(|l| map.file_of(l.span.start).is_some())
        .collect();
    labels.sort_by_key(|l| (l.span.start, !l.primary));
    let mut last_line: Option<(u32, usize)> = None;
    for label in &labels {
        let Some(file) = map.file_of(label.span.start) else {
            continue;
        };
        let (line, _) = file.line_col(label.span.start);
        if let Some((base, prev)) = last_line
            && base == file.base
            && prev + 1 < line
        {
            let _ = writeln!(out, "...");
        }
        if last_line != Some((file.base, line)) {
            let _ = writeln!(out, "{}", expand_tabs(file.line_text(line)));
        }
        last_line = Some((file.base, line));

        let text = file.line_text(line);
        let range = file.local_range(label.span);
        let line_off = line_offset(&file.text, range.start);
        let start_in_line = (range.start - line_off).min(text.len());
        let end_in_line = (range.end - line_off).min(text.len()).max(start_in_line);
        let start_col = display_width(&text[..start_in_line]);
        let end_col = display_width(&text[..end_in_line]);
        let width = end_col.saturating_sub(start_col).max(1);
        let mark = if label.primary { "~" } else { "-" };
        let msg = if label.message.is_empty() {
            String::new()
        } else {
            format!(" {}", label.message)
        };
        let _ = writeln!(out, "{}{}{msg}", " ".repeat(start_col), mark.repeat(width));
    }
    for help in &diagnostic.help {
        let _ = writeln!(out, "HINT: {help}");
    }
    for note in &diagnostic.notes {
        let _ = writeln!(out, "NOTE: {note}");
    }
    if let Some(code) = diagnostic.code {
        let _ = writeln!(out, "CODE: {code}");
    }
    out
}

/// Where a span is, as bpftrace writes it: `LINE:COL-ENDCOL` (1-based, the
/// end exclusive; an empty span still covers one column), or
/// `LINE-ENDLINE` for a span over several lines.
fn location(file: &SourceFile, span: Span) -> String {
    let (line, col) = file.line_col(span.start);
    let end_line = span_last_line(file, span);
    if end_line > line {
        return format!("{line}-{end_line}");
    }
    let (after_line, after_col) = file.line_col(span.end.max(span.start));
    let end_col = if after_line == line {
        after_col
    } else {
        // The span takes its line's newline: it ends with the line.
        file.line_text(line).chars().count() + 1
    };
    format!("{line}:{col}-{}", end_col.max(col + 1))
}

/// The line of a span's last character (its first line if it is empty).
fn span_last_line(file: &SourceFile, span: Span) -> usize {
    let range = file.local_range(span);
    if range.end <= range.start {
        return file.line_col(span.start).0;
    }
    let last = file.text[..range.end]
        .char_indices()
        .next_back()
        .map_or(range.start, |(i, _)| i.max(range.start));
    file.line_col(file.base + last as u32).0
}

/// File-relative offset of the start of the line containing `offset`.
fn line_offset(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// Display width of a line prefix: a tab is four columns, as in
/// [`expand_tabs`], other chars one.
fn display_width(prefix: &str) -> usize {
    prefix
        .chars()
        .map(|c| if c == '\t' { TAB_WIDTH } else { 1 })
        .sum()
}

fn expand_tabs(line: &str) -> String {
    line.replace('\t', &" ".repeat(TAB_WIDTH))
}
