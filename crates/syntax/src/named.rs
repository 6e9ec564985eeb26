//! Named program parameters (`weft -e '...' -- --level=3 --verbose`), read
//! by `getopt("name"[, default[, "description"]])`, put in before checking
//! as literals, as positional parameters are:
//!
//! - the default's type is the parameter's: an integer, a string, or a
//!   bool (also without a default: `getopt("verbose")` is `false`, and
//!   `--verbose` alone is `true`);
//! - a value that does not read as that type is a command-line error
//!   ("program command line option --level invalid integer (value: x)"),
//!   as bpftrace's current release words it, and the default stands in; a
//!   negative default makes the integer signed, else it takes no `-`; a
//!   bool reads `1 true on yes` and `0 false off no`, in any case;
//! - every `getopt` name is an expected option (its description shown by
//!   `-- --help`); the caller rejects a given option no `getopt` names.
//!
//! bpftrace sets them in a read-only global at load; weft compiles each in
//! as a constant, which behaves the same (one value per run).

use std::collections::BTreeMap;

use source::Diagnostic;

use crate::ast::*;
use crate::diagnostics as diag;
use crate::positional::positional_int;
use crate::visit::{VisitMut, walk_expr, walk_items};

/// One `--name[=value]` after `--`, as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedParam {
    pub name: String,
    /// `None` for `--name` alone.
    pub value: Option<String>,
}

impl NamedParam {
    /// `--name=value` or `--name`; `None` when `arg` is not an option.
    pub fn parse(arg: &str) -> Option<NamedParam> {
        let body = arg.strip_prefix("--").filter(|b| !b.is_empty())?;
        Some(match body.split_once('=') {
            Some((name, value)) => NamedParam {
                name: name.to_string(),
                value: Some(value.to_string()),
            },
            None => NamedParam {
                name: body.to_string(),
                value: None,
            },
        })
    }
}

/// What the script's `getopt` calls made of the named parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NamedOutcome {
    /// Every option a `getopt` names, by name, with its description (empty
    /// when none was given).
    pub expected: BTreeMap<String, String>,
    /// Values that do not read as their option's type, in bpftrace's words.
    pub invalid: Vec<String>,
}

impl NamedOutcome {
    /// The given options no `getopt` names (`help` aside: it asks for the list).
    pub fn unexpected<'a>(&self, given: &'a [NamedParam]) -> Vec<&'a str> {
        given
            .iter()
            .map(|p| p.name.as_str())
            .filter(|n| *n != "help" && !self.expected.contains_key(*n))
            .collect()
    }

    /// bpftrace's hint: `expected program options: --a, --b`, or with
    /// `help` one option a line with its description.
    pub fn hint(&self, help: bool) -> String {
        if self.expected.is_empty() {
            return "no custom program options defined.".to_string();
        }
        let options: Vec<String> = self
            .expected
            .iter()
            .map(|(name, description)| {
                if help && !description.is_empty() {
                    format!("--{name}: {description}")
                } else {
                    format!("--{name}")
                }
            })
            .collect();
        if help {
            format!("expected program options:\n{}", options.join("\n"))
        } else {
            format!("expected program options: {}", options.join(", "))
        }
    }
}

/// Replaces every `getopt(...)` of `program` with its value from `given`
/// (the last of a name wins) or its default.
pub fn substitute_named(
    program: &mut Program,
    given: &[NamedParam],
) -> (NamedOutcome, Vec<Diagnostic>) {
    let mut pass = Substitute {
        given,
        next_id: program.node_count,
        outcome: NamedOutcome::default(),
        diags: Vec::new(),
    };
    walk_items(&mut pass, &mut program.items);
    program.node_count = pass.next_id;
    (pass.outcome, pass.diags)
}

/// A `getopt` default, which is the parameter's type.
enum Default {
    Int { value: u64, negative: bool },
    Str(Vec<u8>),
    Bool(bool),
}

struct Substitute<'a> {
    given: &'a [NamedParam],
    next_id: u32,
    outcome: NamedOutcome,
    diags: Vec<Diagnostic>,
}

impl Substitute<'_> {
    /// The call's default, or why it cannot have one (reported).
    fn default(&mut self, e: Option<&Expr>) -> Option<Default> {
        let Some(e) = e else {
            return Some(Default::Bool(false));
        };
        let found = match &e.kind {
            ExprKind::Int { value, .. } => Some(Default::Int {
                value: *value,
                negative: false,
            }),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                expr,
            } => match expr.kind {
                ExprKind::Int { value, .. } => Some(Default::Int {
                    value: (value as i64).wrapping_neg() as u64,
                    negative: value != 0,
                }),
                _ => None,
            },
            ExprKind::Str(s) => Some(Default::Str(s.clone())),
            ExprKind::Bool(b) => Some(Default::Bool(*b)),
            _ => None,
        };
        if found.is_none() {
            self.diags.push(diag::getopt_call(
                e.span,
                "getopt()'s default must be an integer, string or bool literal",
                "not a literal",
            ));
        }
        found
    }

    /// The value `--name` gives, read as the default's type (an unsigned
    /// default takes no negative value).
    fn value(&mut self, name: &str, default: Default) -> Default {
        let Some(param) = self.given.iter().rev().find(|p| p.name == name) else {
            return default;
        };
        let read = match (&default, param.value.as_deref()) {
            (Default::Bool(_), None) => Ok(Default::Bool(true)),
            (Default::Bool(_), Some(text)) => match text.to_ascii_lowercase().as_str() {
                "1" | "true" | "on" | "yes" => Ok(Default::Bool(true)),
                "0" | "false" | "off" | "no" => Ok(Default::Bool(false)),
                _ => Err(("expects a boolean (e.g. 'true')", text)),
            },
            (Default::Int { .. }, None) => Err(("expects an integer", "true")),
            (Default::Int { negative, .. }, Some(text)) => {
                let signed = *negative;
                match positional_int(text) {
                    Some(_) if !signed && text.starts_with('-') => Err(("invalid integer", text)),
                    Some(v) => Ok(Default::Int {
                        value: v,
                        negative: (v as i64) < 0 && text.starts_with('-'),
                    }),
                    None => Err(("invalid integer", text)),
                }
            }
            (Default::Str(_), None) => Err(("expects a string", "true")),
            (Default::Str(_), Some(text)) => Ok(Default::Str(text.as_bytes().to_vec())),
        };
        read.unwrap_or_else(|(why, text)| {
            self.outcome.invalid.push(format!(
                "program command line option --{name} {why} (value: {text})"
            ));
            default
        })
    }

    fn literal(&mut self, value: Default, span: source::Span) -> ExprKind {
        match value {
            Default::Bool(b) => ExprKind::Bool(b),
            Default::Str(s) => ExprKind::Str(s),
            Default::Int {
                value,
                negative: true,
            } => {
                // `-5` is `-(5)`, as the literal would be written.
                let id = NodeId(self.next_id);
                self.next_id += 1;
                ExprKind::Unary {
                    op: UnaryOp::Neg,
                    expr: Box::new(Expr {
                        id,
                        kind: ExprKind::Int {
                            value: (value as i64).unsigned_abs(),
                            form: IntForm::Plain,
                        },
                        span,
                    }),
                }
            }
            Default::Int { value, .. } => ExprKind::Int {
                value,
                form: IntForm::Plain,
            },
        }
    }
}

impl VisitMut for Substitute<'_> {
    fn visit_expr(&mut self, e: &mut Expr) {
        // A failed call becomes an `Error` node: reported once, here.
        let ExprKind::Call { name, args, .. } = &e.kind else {
            walk_expr(self, e);
            return;
        };
        if name != "getopt" {
            walk_expr(self, e);
            return;
        }
        let args = args.clone();
        let Some(ExprKind::Str(option)) = args.first().map(|a| &a.kind) else {
            let span = args.first().map_or(e.span, |a| a.span);
            self.diags.push(diag::getopt_call(
                span,
                "getopt() takes the option's name as a string literal first",
                "not a string literal",
            ));
            e.kind = ExprKind::Error;
            return;
        };
        if args.len() > 3 {
            self.diags.push(diag::getopt_call(
                e.span,
                "getopt() takes a name, a default and a description, at most",
                "too many arguments",
            ));
            e.kind = ExprKind::Error;
            return;
        }
        let description = match args.get(2).map(|a| (&a.kind, a.span)) {
            None => String::new(),
            Some((ExprKind::Str(d), _)) => String::from_utf8_lossy(d).into_owned(),
            Some((_, span)) => {
                self.diags.push(diag::getopt_call(
                    span,
                    "getopt()'s description must be a string literal",
                    "not a string literal",
                ));
                e.kind = ExprKind::Error;
                return;
            }
        };
        let Some(default) = self.default(args.get(1)) else {
            e.kind = ExprKind::Error;
            return;
        };
        let option = String::from_utf8_lossy(option).into_owned();
        let value = self.value(&option, default);
        let described = self.outcome.expected.entry(option).or_default();
        if described.is_empty() {
            *described = description;
        }
        e.kind = self.literal(value, e.span);
    }
}
