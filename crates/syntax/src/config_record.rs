//! bpftrace's `config()` record (also `__builtin_config` and a bare
//! `config`): each `config().KEY` becomes the literal the run's settings
//! give for `KEY` (an integer, a bool or a string), before checking, as
//! positional and named parameters are. The settings are the caller's (the
//! script's `config` blocks and the environment, which the checker reads).
//!
//! Example: `BEGIN { printf("%d %s\n", config().max_strlen, config().stack_mode); }`

use source::Diagnostic;

use crate::ast::*;
use crate::diagnostics as diag;
use crate::visit::{VisitMut, walk_expr, walk_items};

/// One setting's value, as `config()` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigLiteral {
    Int(u64),
    Bool(bool),
    Str(String),
}

/// Replaces every `config().KEY` of `program` with `value(KEY)`; a name
/// that is no key is reported.
pub fn substitute_config(
    program: &mut Program,
    value: &dyn Fn(&str) -> Option<ConfigLiteral>,
) -> Vec<Diagnostic> {
    let mut pass = Substitute {
        value,
        diags: Vec::new(),
    };
    walk_items(&mut pass, &mut program.items);
    pass.diags
}

struct Substitute<'a> {
    value: &'a dyn Fn(&str) -> Option<ConfigLiteral>,
    diags: Vec<Diagnostic>,
}

/// Whether `e` names the config record.
fn is_config(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Ident(name) => name == "config" || name == "__builtin_config",
        ExprKind::Call { name, args, .. } => name == "config" && args.is_empty(),
        _ => false,
    }
}

impl VisitMut for Substitute<'_> {
    fn visit_expr(&mut self, e: &mut Expr) {
        let key = match &e.kind {
            ExprKind::Field {
                expr,
                name,
                arrow: false,
            } if is_config(expr) => name.clone(),
            _ => {
                walk_expr(self, e);
                return;
            }
        };
        e.kind = match (self.value)(&key) {
            Some(ConfigLiteral::Int(value)) => ExprKind::Int {
                value,
                form: IntForm::Plain,
            },
            Some(ConfigLiteral::Bool(b)) => ExprKind::Bool(b),
            Some(ConfigLiteral::Str(s)) => ExprKind::Str(s.into_bytes()),
            None => {
                self.diags.push(diag::unknown_config_field(e.span, &key));
                ExprKind::Error
            }
        };
    }
}
