//! What the exporters (`--prometheus`, `--otlp`) need from the script
//! beyond the manifest's layouts: a label name for each map key, named
//! after the key expression, and the `// weft:metric` directives.
//!
//! A directive is a line comment, so bpftrace reads the same script
//! unchanged:
//!
//! ```text
//! // weft:metric @bytes name=read_bytes unit=bytes help="Bytes read, by process"
//! // weft:metric @start skip
//! // weft:metric @lat labels=dev,op unit=ns
//! ```
//!
//! - `name=NAME`: the metric's name after the `weft_` prefix (letters,
//!   digits and `_`); the unit's suffix and `_total` are added as usual;
//! - `help="TEXT"`: the help text (quoted when it has spaces);
//! - `unit=ns|us|ms|s|bytes`: the unit of the values; time is exported in
//!   seconds (values and histogram bounds scaled) with a `_seconds` suffix;
//! - `labels=a,b`: the label names of the key arguments, in order;
//! - `skip`: the map is not exported (scratch state such as `@start[tid]`).

use abi::{MapExport, MetricUnit};
use source::{Diagnostic, Diagnostics, Span};
use syntax::ast::{Expr, ExprKind};

use crate::diagnostics as diag;
use crate::typed::TypedProgram;

/// The word that starts a directive after `//`.
const DIRECTIVE: &str = "weft:metric";

/// The label names of a map expression's key arguments (`@m[comm, args->fd]`
/// gives `comm`, `fd`); a single tuple key counts as its elements.
pub fn key_labels(map: &Expr) -> Vec<Option<String>> {
    let ExprKind::Map { keys, .. } = &map.kind else {
        return Vec::new();
    };
    match keys.as_slice() {
        [
            Expr {
                kind: ExprKind::Tuple(items),
                ..
            },
        ] => items.iter().map(expr_label).collect(),
        _ => keys.iter().map(expr_label).collect(),
    }
}

/// The name an expression gives its label: a builtin (`comm`, `pid`), a
/// field or member (`args->fd` → `fd`), a variable (`$fd` → `fd`), through
/// casts and the functions that only present a value (`str(args->filename)`
/// → `filename`, `ntop(args->daddr)` → `daddr`); `kstack`/`ustack` name
/// themselves. Anything else has no name.
pub fn expr_label(e: &Expr) -> Option<String> {
    let name = match &e.kind {
        ExprKind::Ident(name) | ExprKind::Var(name) => name.clone(),
        ExprKind::Field { name, .. } => name.clone(),
        ExprKind::Cast { expr, .. } => return expr_label(expr),
        ExprKind::Call { name, args, .. } => match name.as_str() {
            "kstack" | "ustack" => name.clone(),
            "str" | "ksym" | "usym" | "ntop" | "buf" | "bswap" | "kaddr" | "uaddr" => {
                return args.last().and_then(expr_label);
            }
            _ => return None,
        },
        _ => return None,
    };
    is_label_name(&name).then_some(name)
}

/// Prometheus's label grammar, without the reserved `__` prefix.
fn is_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__")
}

/// Keeps the names two stores agree on: a key argument written as
/// `pid` in one probe and `tid` in another has no name.
pub fn agree_labels(kept: &mut [Option<String>], other: &[Option<String>]) {
    for (index, label) in kept.iter_mut().enumerate() {
        if label.is_some() && other.get(index) != Some(label) {
            *label = None;
        }
    }
}

/// One `// weft:metric` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// The map named, `@` included.
    pub map: String,
    pub map_span: Span,
    pub name: Option<String>,
    pub help: Option<String>,
    pub unit: MetricUnit,
    pub labels: Option<(Vec<String>, Span)>,
    pub skip: bool,
}

/// Every `// weft:metric` directive of a script's text (whose first byte
/// sits at global offset `base`), with a diagnostic for each malformed one.
pub fn parse_directives(text: &str, base: u32) -> (Vec<Directive>, Diagnostics) {
    let mut out = Vec::new();
    let mut diags = Diagnostics::new();
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start();
        let Some(comment) = trimmed.strip_prefix("//") else {
            continue;
        };
        let body = comment.trim_start();
        let Some(rest) = body.strip_prefix(DIRECTIVE) else {
            continue;
        };
        if rest.chars().next().is_some_and(|c| !c.is_whitespace()) {
            continue;
        }
        let at = start + (line.len() - rest.len());
        match parse_one(rest.trim_end_matches(['\n', '\r']), base + at as u32) {
            Ok(d) => out.push(d),
            Err(d) => diags.push(d),
        }
    }
    (out, diags)
}

/// A cursor over one directive's text, `base` its global offset.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    base: u32,
}

impl Cursor<'_> {
    fn skip_spaces(&mut self) {
        while self.text[self.pos..].starts_with([' ', '\t']) {
            self.pos += 1;
        }
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.base + start as u32, self.base + end as u32)
    }

    /// A bare word: up to a space or `=`.
    fn word(&mut self) -> (&str, Span) {
        let start = self.pos;
        let len = self.text[start..]
            .find([' ', '\t', '='])
            .unwrap_or(self.text.len() - start);
        self.pos += len;
        (&self.text[start..self.pos], self.span(start, self.pos))
    }

    /// A value: a bare word, or a double-quoted string with `\"` and `\\`.
    fn value(&mut self) -> Result<(String, Span), Diagnostic> {
        let start = self.pos;
        if !self.text[start..].starts_with('"') {
            let len = self.text[start..]
                .find([' ', '\t'])
                .unwrap_or(self.text.len() - start);
            self.pos += len;
            return Ok((
                self.text[start..self.pos].to_string(),
                self.span(start, self.pos),
            ));
        }
        let mut value = String::new();
        let mut chars = self.text[start + 1..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos = start + 1 + i + 1;
                    return Ok((value, self.span(start, self.pos)));
                }
                '\\' => match chars.next() {
                    Some((_, e @ ('"' | '\\'))) => value.push(e),
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, other)) => {
                        value.push('\\');
                        value.push(other);
                    }
                    None => break,
                },
                c => value.push(c),
            }
        }
        Err(diag::invalid_metric_directive(
            self.span(start, self.text.len()),
            "the quoted value never ends",
            "close it with `\"`",
        ))
    }
}

fn parse_one(text: &str, base: u32) -> Result<Directive, Diagnostic> {
    let mut c = Cursor { text, pos: 0, base };
    c.skip_spaces();
    let (map, map_span) = c.word();
    let map = map.to_string();
    if !map.starts_with('@') {
        return Err(diag::invalid_metric_directive(
            if map.is_empty() {
                c.span(0, text.len())
            } else {
                map_span
            },
            "a directive starts with the map it is about",
            "write `// weft:metric @map key=value ...`",
        ));
    }
    let mut d = Directive {
        map,
        map_span,
        name: None,
        help: None,
        unit: MetricUnit::None,
        labels: None,
        skip: false,
    };
    loop {
        c.skip_spaces();
        if c.pos >= text.len() {
            return Ok(d);
        }
        let (key, key_span) = c.word();
        let key = key.to_string();
        if key == "skip" {
            d.skip = true;
            continue;
        }
        if !text[c.pos..].starts_with('=') {
            return Err(diag::invalid_metric_directive(
                key_span,
                &format!("`{key}` is not a directive setting"),
                "settings are name=, help=, unit=, labels= and skip",
            ));
        }
        c.pos += 1;
        let (value, value_span) = c.value()?;
        match key.as_str() {
            "name" => {
                if !is_label_name(&value) {
                    return Err(diag::invalid_metric_directive(
                        value_span,
                        "a metric name has only letters, digits and `_`, and does not start with a digit",
                        "the exported name is `weft_` followed by this name",
                    ));
                }
                d.name = Some(value);
            }
            "help" => d.help = Some(value),
            "unit" => {
                d.unit = MetricUnit::parse(&value).ok_or_else(|| {
                    diag::invalid_metric_directive(
                        value_span,
                        &format!("`{value}` is not a unit weft knows"),
                        "units are ns, us, ms, s (exported in seconds) and bytes",
                    )
                })?;
            }
            "labels" => {
                let names: Vec<String> = value.split(',').map(str::to_string).collect();
                if let Some(bad) = names.iter().find(|n| !is_label_name(n)) {
                    return Err(diag::invalid_metric_directive(
                        value_span,
                        &format!("`{bad}` is not a label name"),
                        "label names have only letters, digits and `_`, separated by commas",
                    ));
                }
                d.labels = Some((names, value_span));
            }
            _ => {
                return Err(diag::invalid_metric_directive(
                    key_span,
                    &format!("`{key}` is not a directive setting"),
                    "settings are name=, help=, unit=, labels= and skip",
                ));
            }
        }
    }
}

/// How every map of `typed` is exported: the label names its stores
/// give, overridden by the directives. A directive that names no map of
/// the script, or gives a wrong number of labels, is an error.
pub fn exports(typed: &TypedProgram, directives: &[Directive]) -> (Vec<MapExport>, Diagnostics) {
    let mut diags = Diagnostics::new();
    let mut out: Vec<MapExport> = typed
        .maps
        .iter()
        .map(|m| MapExport {
            labels: m.key_labels.clone(),
            ..MapExport::default()
        })
        .collect();
    for d in directives {
        let Some(index) = typed.map_index(&d.map) else {
            let names: Vec<&str> = typed.maps.iter().map(|m| m.name.as_str()).collect();
            diags.push(diag::metric_directive_unknown_map(
                d.map_span, &d.map, &names,
            ));
            continue;
        };
        let export = &mut out[index];
        if let Some((labels, span)) = &d.labels {
            if labels.len() != export.labels.len() {
                diags.push(diag::invalid_metric_directive(
                    *span,
                    &format!(
                        "{} has {} key argument(s), not {}",
                        d.map,
                        export.labels.len(),
                        labels.len()
                    ),
                    "give one label name per key argument, in order",
                ));
                continue;
            }
            export.labels = labels.iter().cloned().map(Some).collect();
        }
        export.name = d.name.clone().or(export.name.take());
        export.help = d.help.clone().or(export.help.take());
        if d.unit != MetricUnit::None {
            export.unit = d.unit;
        }
        export.skip |= d.skip;
    }
    (out, diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels_of(src: &str) -> Vec<Option<String>> {
        let (program, diags) = syntax::parse_text(src, 0);
        assert!(!diags.has_errors(), "{src}");
        let syntax::ast::Item::Probe(p) = &program.items[0] else {
            panic!("a probe")
        };
        let syntax::ast::StmtKind::Assign { target, .. } = &p.body.stmts[0].kind else {
            panic!("an assignment")
        };
        key_labels(target)
    }

    fn some(names: &[&str]) -> Vec<Option<String>> {
        names.iter().map(|n| Some(n.to_string())).collect()
    }

    #[test]
    fn labels_are_named_after_key_expressions() {
        assert_eq!(
            labels_of("BEGIN { @[comm, pid] = count(); }"),
            some(&["comm", "pid"])
        );
        assert_eq!(
            labels_of("BEGIN { @x[args->fd] = count(); }"),
            some(&["fd"])
        );
        assert_eq!(
            labels_of("BEGIN { @x[args.fd, $ret] = count(); }"),
            some(&["fd", "ret"])
        );
        assert_eq!(
            labels_of("BEGIN { @x[str(args->filename), kstack] = count(); }"),
            some(&["filename", "kstack"])
        );
        assert_eq!(
            labels_of("BEGIN { @x[(comm, tid)] = count(); }"),
            some(&["comm", "tid"])
        );
        assert_eq!(
            labels_of("BEGIN { @x[pid / 2, 3, $1] = count(); }"),
            vec![None, None, None]
        );
        assert_eq!(
            labels_of("BEGIN { @x = count(); }"),
            Vec::<Option<String>>::new()
        );
    }

    #[test]
    fn stores_that_disagree_leave_the_argument_unnamed() {
        let mut kept = some(&["pid", "comm"]);
        agree_labels(&mut kept, &some(&["tid", "comm"]));
        assert_eq!(kept, vec![None, Some("comm".to_string())]);
        agree_labels(&mut kept, &some(&["pid", "comm"]));
        assert_eq!(kept, vec![None, Some("comm".to_string())]);
    }

    #[test]
    fn directives_are_read_from_line_comments() {
        let text = "// weft:metric @bytes name=read_bytes unit=bytes help=\"Bytes read, \\\"all\\\"\"\n\
                    BEGIN { }\n    //weft:metric @start skip\n// weft:metrics @x\n// a comment\n";
        let (ds, diags) = parse_directives(text, 100);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(ds.len(), 2);
        assert_eq!(ds[0].map, "@bytes");
        assert_eq!(ds[0].map_span, Span::new(115, 121));
        assert_eq!(ds[0].name.as_deref(), Some("read_bytes"));
        assert_eq!(ds[0].unit, MetricUnit::Bytes);
        assert_eq!(ds[0].help.as_deref(), Some("Bytes read, \"all\""));
        assert_eq!(ds[1].map, "@start");
        assert!(ds[1].skip);
    }

    #[test]
    fn malformed_directives_are_errors_at_the_token() {
        let one = |text: &str| {
            let (ds, diags) = parse_directives(text, 0);
            assert!(ds.is_empty(), "{text}");
            let d = diags.iter().next().expect("a diagnostic").clone();
            (d.code.map(|c| c.as_str()), d.message)
        };
        assert_eq!(
            one("// weft:metric bytes"),
            (
                Some("E0390"),
                "invalid `// weft:metric` directive: a directive starts with the map it is about"
                    .to_string()
            )
        );
        assert!(
            one("// weft:metric @b unit=hours")
                .1
                .contains("`hours` is not a unit")
        );
        assert!(
            one("// weft:metric @b colour=red")
                .1
                .contains("`colour` is not a directive setting")
        );
        assert!(
            one("// weft:metric @b name=9lives")
                .1
                .contains("a metric name")
        );
        assert!(
            one("// weft:metric @b labels=a,b-c")
                .1
                .contains("`b-c` is not a label name")
        );
        assert!(
            one("// weft:metric @b help=\"open")
                .1
                .contains("never ends")
        );
    }
}
