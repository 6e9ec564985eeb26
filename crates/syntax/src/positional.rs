//! Positional parameters (`$1`, `$2`, ..., `$#`) put in as the command line
//! gives them, before checking, as bpftrace does:
//!
//! - in an attach point, as text (`interval:ms:$1`, `BEG$1`, or a whole
//!   `$1`), the parts split again;
//! - in `str($N)`, as a string literal of the text, digits too (`str($1)` of
//!   `1` is `"1"`; a missing parameter is `""`); `str($N + k)` skips the
//!   text's first `k` bytes. As bpftrace, `str()` of a literal is folded
//!   into a string literal (`str(5)` is `"5"`, `str("abc", 2)` is `"ab"`),
//!   and so is `"text" + k`, so `kaddr(str($1))` names a symbol;
//! - anywhere else, a parameter that reads as an integer (decimal, `0x` hex,
//!   `0` octal, a leading `-`) becomes that integer literal, so it serves
//!   where a literal is needed: `unroll($1)`, `lhist(n, $1, $2, $3)`,
//!   `kstack($1)`, `buf(s, $1)`. Other parameters stay [`ExprKind::Positional`]
//!   (a string, or zero when missing), which the checker types.

use crate::ast::*;
use crate::parser::split_attach_point;
use crate::visit::{VisitMut, walk_expr, walk_items};

/// What a positional parameter's text reads as when it is an integer:
/// `123`, `-5`, `0x1f` and `0775` (octal, as C and bpftrace read it); values
/// from 2^63 up keep their 64 bits (`0xffffffffffffffff`).
pub fn positional_int(text: &str) -> Option<u64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let value = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        u64::from_str_radix(&digits[1..], 8).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<u64>().ok()?
    } else {
        return None;
    };
    if negative {
        // `-N` must fit an int64.
        (value <= i64::MAX as u64 + 1).then(|| (value as i64).wrapping_neg() as u64)
    } else {
        Some(value)
    }
}

/// Puts the parameters `params` (`$1` first) into `program` (see the module docs).
pub fn substitute_positionals(program: &mut Program, params: &[String]) {
    for item in &mut program.items {
        let points = match item {
            Item::Probe(p) => &mut p.attach_points,
            _ => continue,
        };
        for ap in points.iter_mut().filter(|ap| ap.raw.contains('$')) {
            let raw = substitute_text(&ap.raw, params);
            let mut pieces = split_attach_point(&raw).into_iter();
            ap.provider = pieces.next().unwrap_or_default();
            ap.parts = pieces.collect();
            ap.raw = raw;
        }
    }
    let mut pass = Substitute {
        params,
        next_id: program.node_count,
    };
    walk_items(&mut pass, &mut program.items);
    program.node_count = pass.next_id;
}

/// `text` with each `$N` and `$#` replaced.
fn substitute_text(text: &str, params: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if let Some(after_hash) = after.strip_prefix('#') {
            out.push_str(&params.len().to_string());
            rest = after_hash;
        } else if digits > 0 {
            let n: usize = after[..digits].parse().unwrap_or(0);
            if let Some(v) = n.checked_sub(1).and_then(|i| params.get(i)) {
                out.push_str(v);
            }
            rest = &after[digits..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

struct Substitute<'a> {
    params: &'a [String],
    /// The next free node id (a negative value is `-` of a new literal node).
    next_id: u32,
}

impl Substitute<'_> {
    fn text(&self, n: u32) -> Option<&str> {
        (n as usize)
            .checked_sub(1)
            .and_then(|i| self.params.get(i))
            .map(String::as_str)
    }
}

impl VisitMut for Substitute<'_> {
    fn visit_expr(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Call { name, args, .. } if name == "str" => {
                // `str($N)` and `str($N + k)` take the parameter's text, digits too.
                let param = match args.first_mut().map(|a| &mut a.kind) {
                    Some(ExprKind::Binary {
                        op: BinaryOp::Add,
                        lhs,
                        ..
                    }) => Some(&mut **lhs),
                    Some(_) => args.first_mut(),
                    None => None,
                };
                if let Some(arg) = param
                    && let ExprKind::Positional(n) = arg.kind
                {
                    let text = self.text(n).unwrap_or_default();
                    arg.kind = ExprKind::Str(text.as_bytes().to_vec());
                }
                walk_expr(self, e);
                fold_str_call(e);
                return;
            }
            ExprKind::Binary {
                op: BinaryOp::Add, ..
            } => {
                walk_expr(self, e);
                fold_string_offset(e);
                return;
            }
            ExprKind::Positional(n) => {
                let Some(value) = self.text(*n).and_then(positional_int) else {
                    return;
                };
                let negative =
                    (value as i64) < 0 && self.text(*n).is_some_and(|t| t.starts_with('-'));
                if negative {
                    // `-5` is `-(5)`, as the literal would be written.
                    let id = NodeId(self.next_id);
                    self.next_id += 1;
                    e.kind = ExprKind::Unary {
                        op: UnaryOp::Neg,
                        expr: Box::new(Expr {
                            id,
                            kind: ExprKind::Int {
                                value: (value as i64).unsigned_abs(),
                                form: IntForm::Plain,
                            },
                            span: e.span,
                        }),
                    };
                } else {
                    e.kind = ExprKind::Int {
                        value,
                        form: IntForm::Plain,
                    };
                }
                return;
            }
            _ => {}
        }
        walk_expr(self, e);
    }
}

/// `"text" + k` (either order) is the text from its byte `k` on, as
/// bpftrace folds it: `str($1 + 1)` of `hello` is `ello`.
fn fold_string_offset(e: &mut Expr) {
    let ExprKind::Binary { lhs, rhs, .. } = &e.kind else {
        return;
    };
    let (text, skip) = match (&lhs.kind, &rhs.kind) {
        (ExprKind::Str(t), ExprKind::Int { value, .. })
        | (ExprKind::Int { value, .. }, ExprKind::Str(t)) => (t, *value),
        _ => return,
    };
    let rest = usize::try_from(skip)
        .ok()
        .and_then(|k| text.get(k..))
        .unwrap_or_default()
        .to_vec();
    e.kind = ExprKind::Str(rest);
}

/// `str(LITERAL[, n])` is the literal's text (an integer's digits), cut to
/// `n` bytes, as bpftrace folds it: `kaddr(str($1))` then names a symbol.
fn fold_str_call(e: &mut Expr) {
    let ExprKind::Call { args, .. } = &e.kind else {
        return;
    };
    let mut text = match args.first().map(|a| &a.kind) {
        Some(ExprKind::Str(t)) => t.clone(),
        Some(ExprKind::Int { value, .. }) => value.to_string().into_bytes(),
        _ => return,
    };
    match args.get(1).map(|a| &a.kind) {
        None => {}
        Some(ExprKind::Int { value, .. }) => {
            text.truncate(usize::try_from(*value).unwrap_or(usize::MAX));
        }
        Some(_) => return,
    }
    if args.len() > 2 {
        return;
    }
    e.kind = ExprKind::Str(text);
}
