//! `fail(fmt, args...)`: a compile-time error of the script's own, as
//! bpftrace's standard library has it: where the call is reached, the
//! script does not compile, and the error says the formatted text.
//!
//! What it does: `fmt` and every argument must be literals (positional
//! parameters are, once put in), formatted as `printf` formats them. A
//! call in a branch the checker knows is never taken (`if (1 < 0)`, or
//! `if ($1 < 2)` run with `$1` of 5) is not reached and says nothing.
//!
//! Example: `BEGIN { if ($1 < 2) { fail("want at least 2, got %d", $1); } }`
//!
//! Lowering: `codegen::lower::builtins::fail` (nothing: a program that
//! still holds it is in a branch never taken).

use abi::printf::{Format, Piece};
use syntax::ast::{Expr, ExprKind, UnaryOp};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "fail",
    signature: "fail(fmt, args...)",
    help: "stops compilation with the formatted message where it is reached",
    check,
    aggregates: false,
};

/// A literal argument of `fail()`.
enum Literal {
    Int(i64),
    Str(Vec<u8>),
}

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let args = cx.args;
    let Some((fmt, rest)) = args.split_first() else {
        cx.wrong_arg_count("a format and its arguments");
        return Type::Void;
    };
    cx.check_all();
    let ExprKind::Str(fmt_text) = &fmt.kind else {
        cx.needs_literal(fmt.span, "fail()'s format");
        return Type::Void;
    };
    let fmt_text = String::from_utf8_lossy(fmt_text);
    let mut values = Vec::new();
    for a in rest {
        match literal(a) {
            Some(v) => values.push(v),
            None => {
                cx.needs_literal(a.span, "every argument of fail()");
                return Type::Void;
            }
        }
    }
    if !cx.in_branch_never_taken() {
        let text = format(&fmt_text, &values);
        cx.error(diag::fail_reached(cx.call.span, &text));
    }
    Type::Void
}

fn literal(e: &Expr) -> Option<Literal> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(Literal::Int(*value as i64)),
        ExprKind::Bool(b) => Some(Literal::Int(i64::from(*b))),
        ExprKind::Str(s) => Some(Literal::Str(s.clone())),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            expr,
        } => match literal(expr)? {
            Literal::Int(v) => Some(Literal::Int(v.wrapping_neg())),
            Literal::Str(_) => None,
        },
        _ => None,
    }
}

/// `fmt` with `values`, as printf renders literals: integers in decimal
/// (`%x`/`%X`/`%o` in their bases), strings as they are, a width pads.
fn format(fmt: &str, values: &[Literal]) -> String {
    let parsed = Format::parse(fmt);
    let mut out = String::new();
    for (i, piece) in parsed.pieces().iter().enumerate() {
        for part in piece {
            match part {
                Piece::Literal(text) => out.push_str(&String::from_utf8_lossy(text)),
                Piece::Directive(d) => {
                    let text = match (values.get(i), d.conversion) {
                        (Some(Literal::Int(v)), b'x') => format!("{v:x}"),
                        (Some(Literal::Int(v)), b'X') => format!("{v:X}"),
                        (Some(Literal::Int(v)), b'o') => format!("{v:o}"),
                        (Some(Literal::Int(v)), b'u') => format!("{}", *v as u64),
                        (Some(Literal::Int(v)), b'c') => {
                            char::from(*v as u8).to_string()
                        }
                        (Some(Literal::Int(v)), _) => v.to_string(),
                        (Some(Literal::Str(s)), _) => String::from_utf8_lossy(s).into_owned(),
                        (None, _) => String::new(),
                    };
                    let pad = " ".repeat(d.width.saturating_sub(text.chars().count()));
                    if d.flags.left {
                        out.push_str(&text);
                        out.push_str(&pad);
                    } else {
                        out.push_str(&pad);
                        out.push_str(&text);
                    }
                }
            }
        }
    }
    out.push_str(&String::from_utf8_lossy(parsed.trailing()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_literals_as_printf() {
        let v = [Literal::Int(5), Literal::Str(b"ab".to_vec()), Literal::Int(255)];
        assert_eq!(format("got %d, %s, %x|%4d|", &v[..3]), "got 5, ab, ff|    |");
        assert_eq!(format("%%|%-3s|", &[Literal::Str(b"a".to_vec())]), "%|a  |");
    }
}
