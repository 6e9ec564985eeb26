//! The C preprocessor's conditional groups (`#if`, `#ifdef`, `#ifndef`,
//! `#elif`, `#else`, `#endif`), applied while parsing.
//!
//! bpftrace runs clang's preprocessor over a script before parsing it, so
//! whatever sits in a group whose condition is false (a `struct` for kernels
//! without BTF, an `#include`, a probe) never reaches the parser. weft does
//! the same: the parser hands each directive line to [`Conditionals`], and
//! skips the lines of a false group without parsing them.
//!
//! Conditions see the macros the caller predefines (`BPFTRACE_HAVE_BTF` when
//! the kernel has BTF: the caller knows the kernel, this crate does not) and
//! the script's own `#define`/`#undef` lines above them. An `#if` expression
//! is evaluated as cpp does for integers: `defined`, `!`, `~`, unary `-`,
//! arithmetic, shifts, comparisons, `&&`, `||`, `?:` and parentheses; a
//! name that is no macro is 0. Macros defined only in `#include`d headers
//! are not known here (a name from a header is 0).

use std::collections::HashMap;

use source::{Diagnostic, Span};

use crate::diagnostics as diag;

/// Whether a macro name is predefined (`BPFTRACE_HAVE_BTF`, `__linux__`, ...).
pub type Predefined<'a> = &'a dyn Fn(&str) -> bool;

/// One open `#if` group.
#[derive(Clone, Debug)]
struct Group {
    /// The lines of the current branch are compiled.
    active: bool,
    /// Some branch of this group was (or is) taken: later `#elif`/`#else` are false.
    taken: bool,
    /// `#else` was seen: another `#elif`/`#else` is an error.
    in_else: bool,
    /// Where the group's `#if` is, for "unterminated".
    span: Span,
}

/// What a directive line does to the parse.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    /// An ordinary directive (`#include`, `#define`, ...): keep it as an item.
    Keep,
    /// A conditional directive: consumed here, nothing to keep.
    Consumed,
}

/// The conditional state of one parse.
pub(crate) struct Conditionals<'a> {
    predefined: Predefined<'a>,
    /// The script's `#define`s so far (name → body); `None` after `#undef`.
    script: HashMap<String, Option<String>>,
    stack: Vec<Group>,
}

impl<'a> Conditionals<'a> {
    pub(crate) fn new(predefined: Predefined<'a>) -> Conditionals<'a> {
        Conditionals {
            predefined,
            script: HashMap::new(),
            stack: Vec::new(),
        }
    }

    /// Whether lines at this point are compiled.
    pub(crate) fn active(&self) -> bool {
        self.stack.last().is_none_or(|g| g.active)
    }

    /// Takes one directive line (`text` starts with `#`, at `span`).
    #[allow(
        clippy::result_large_err,
        reason = "a diagnostic is made once, when compiling stops; boxing it would not speed anything"
    )]
    pub(crate) fn directive(&mut self, text: &str, span: Span) -> Result<Effect, Diagnostic> {
        let Some((name, rest)) = split_directive(text) else {
            return Ok(Effect::Keep);
        };
        let outer = self.active();
        match name {
            "if" | "ifdef" | "ifndef" => {
                // Inside a false group nothing is evaluated, only counted.
                let cond = outer
                    && match name {
                        "ifdef" => self.is_defined(first_word(rest)),
                        "ifndef" => !self.is_defined(first_word(rest)),
                        _ => self.condition(rest),
                    };
                self.stack.push(Group {
                    active: cond,
                    taken: cond,
                    in_else: false,
                    span,
                });
                Ok(Effect::Consumed)
            }
            "elif" | "else" => {
                let parent = self
                    .stack
                    .len()
                    .checked_sub(1)
                    .map(|n| self.stack[..n].iter().all(|g| g.active));
                let Some(parent_active) = parent else {
                    return Err(diag::directive_without_if(span, name));
                };
                let group = self.stack.last().cloned().expect("checked above");
                if group.in_else {
                    return Err(diag::directive_after_else(span, name));
                }
                let cond =
                    parent_active && !group.taken && (name == "else" || self.condition(rest));
                let group = self.stack.last_mut().expect("checked above");
                group.active = cond;
                group.taken |= cond;
                group.in_else = name == "else";
                Ok(Effect::Consumed)
            }
            "endif" => {
                if self.stack.pop().is_none() {
                    return Err(diag::directive_without_if(span, name));
                }
                Ok(Effect::Consumed)
            }
            "define" if outer => {
                if let Some((name, body)) = definition(rest) {
                    self.script.insert(name.to_string(), Some(body.to_string()));
                }
                Ok(Effect::Keep)
            }
            "undef" if outer => {
                self.script.insert(first_word(rest).to_string(), None);
                Ok(Effect::Keep)
            }
            _ => Ok(Effect::Keep),
        }
    }

    /// The `#if` groups still open at the end of the script.
    pub(crate) fn unterminated(&self) -> impl Iterator<Item = Span> + '_ {
        self.stack.iter().map(|g| g.span)
    }

    fn is_defined(&self, name: &str) -> bool {
        match self.script.get(name) {
            Some(body) => body.is_some(),
            None => (self.predefined)(name),
        }
    }

    /// The value of an `#if`/`#elif` expression; anything unreadable is false.
    fn condition(&self, expr: &str) -> bool {
        eval_c_expr(expr, &|n| self.macro_value(n, 0), &|n| self.is_defined(n))
            .is_some_and(|v| v != 0)
    }

    /// The integer a macro name stands for in an `#if`: its body's value,
    /// 1 for a predefined name, 0 for a name that is no macro.
    fn macro_value(&self, name: &str, depth: usize) -> Option<i64> {
        match self.script.get(name) {
            Some(Some(body)) if depth < 16 => {
                if tokenize(body).is_empty() {
                    return Some(0);
                }
                eval_c_expr(body, &|n| self.macro_value(n, depth + 1), &|n| {
                    self.is_defined(n)
                })
            }
            Some(_) => Some(0),
            None => Some(i64::from((self.predefined)(name))),
        }
    }
}

/// Evaluates a C integer constant expression as the preprocessor does:
/// literals, `defined NAME`, unary `! ~ - +`, arithmetic, shifts,
/// comparisons, bit operations, `&& || ?:` and parentheses. `value` gives
/// the integer a name stands for (`None`: the expression has no value);
/// `defined` answers `defined(NAME)`. `None` when the text is no such
/// expression.
pub fn eval_c_expr(
    expr: &str,
    value: &dyn Fn(&str) -> Option<i64>,
    defined: &dyn Fn(&str) -> bool,
) -> Option<i64> {
    let tokens = tokenize(expr);
    let mut eval = Eval {
        value,
        defined,
        tokens: &tokens,
        at: 0,
    };
    let v = eval.ternary()?;
    (eval.at == tokens.len()).then_some(v)
}

/// `# define X 1` → `("define", "X 1")`.
pub(crate) fn split_directive(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    Some((&rest[..end], rest[end..].trim()))
}

/// Whether a directive opens or closes a group (what a skipped region must count).
pub(crate) fn is_conditional(name: &str) -> bool {
    matches!(name, "if" | "ifdef" | "ifndef" | "elif" | "else" | "endif")
}

/// `NAME BODY` of an object-like macro; a function-like one (`F(x)`) counts
/// as defined with an empty body.
fn definition(rest: &str) -> Option<(&str, &str)> {
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..end];
    if name.is_empty() {
        return None;
    }
    if rest[end..].starts_with('(') {
        return Some((name, ""));
    }
    let body = rest[end..].split("/*").next().unwrap_or("");
    let body = body.split("//").next().unwrap_or("").trim();
    Some((name, body))
}

fn first_word(s: &str) -> &str {
    s.split(|c: char| c.is_whitespace() || c == '/')
        .next()
        .unwrap_or("")
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum CTok {
    Int(i64),
    Ident(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "(", ")", "!", "~", "+", "-", "*", "/", "%",
    "<", ">", "&", "|", "^", "?", ":",
];

/// The tokens of an `#if` expression (comments cut); `None` tokens end it.
fn tokenize(expr: &str) -> Vec<CTok> {
    let expr = expr.split("/*").next().unwrap_or("");
    let expr = expr.split("//").next().unwrap_or("");
    let b = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            match integer(&expr[start..i]) {
                Some(v) => out.push(CTok::Int(v)),
                None => return vec![CTok::Op("?")], // unreadable: fails to evaluate
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(CTok::Ident(expr[start..i].to_string()));
        } else if let Some(op) = OPS.iter().find(|op| expr[i..].starts_with(**op)) {
            out.push(CTok::Op(op));
            i += op.len();
        } else {
            return vec![CTok::Op("?")];
        }
    }
    out
}

/// A C integer literal: decimal, `0x` hex or `0` octal, with `U`/`L` suffixes.
fn integer(s: &str) -> Option<i64> {
    let s = s.trim_end_matches(['u', 'U', 'l', 'L']);
    let v = if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()?
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()?
    } else {
        s.parse::<u64>().ok()?
    };
    Some(v as i64)
}

/// Precedence climbing over a constant expression; `None` when malformed.
struct Eval<'e, 't> {
    value: &'e dyn Fn(&str) -> Option<i64>,
    defined: &'e dyn Fn(&str) -> bool,
    tokens: &'t [CTok],
    at: usize,
}

impl Eval<'_, '_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(CTok::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn eat(&mut self, op: &str) -> bool {
        let hit = self.peek_op() == Some(op);
        if hit {
            self.at += 1;
        }
        hit
    }

    fn ternary(&mut self) -> Option<i64> {
        let c = self.binary(0)?;
        if self.eat("?") {
            let a = self.ternary()?;
            if !self.eat(":") {
                return None;
            }
            let b = self.ternary()?;
            return Some(if c != 0 { a } else { b });
        }
        Some(c)
    }

    fn binary(&mut self, min_prec: u8) -> Option<i64> {
        let mut lhs = self.unary()?;
        while let Some(op) = self.peek_op() {
            let prec = match op {
                "||" => 1,
                "&&" => 2,
                "|" => 3,
                "^" => 4,
                "&" => 5,
                "==" | "!=" => 6,
                "<" | ">" | "<=" | ">=" => 7,
                "<<" | ">>" => 8,
                "+" | "-" => 9,
                "*" | "/" | "%" => 10,
                _ => break,
            };
            if prec < min_prec {
                break;
            }
            self.at += 1;
            let rhs = self.binary(prec + 1)?;
            lhs = match op {
                "||" => i64::from(lhs != 0 || rhs != 0),
                "&&" => i64::from(lhs != 0 && rhs != 0),
                "|" => lhs | rhs,
                "^" => lhs ^ rhs,
                "&" => lhs & rhs,
                "==" => i64::from(lhs == rhs),
                "!=" => i64::from(lhs != rhs),
                "<" => i64::from(lhs < rhs),
                ">" => i64::from(lhs > rhs),
                "<=" => i64::from(lhs <= rhs),
                ">=" => i64::from(lhs >= rhs),
                "<<" => lhs.wrapping_shl(rhs as u32),
                ">>" => lhs.wrapping_shr(rhs as u32),
                "+" => lhs.wrapping_add(rhs),
                "-" => lhs.wrapping_sub(rhs),
                "*" => lhs.wrapping_mul(rhs),
                "/" => lhs.checked_div(rhs)?,
                _ => lhs.checked_rem(rhs)?,
            };
        }
        Some(lhs)
    }

    fn unary(&mut self) -> Option<i64> {
        if self.eat("!") {
            return Some(i64::from(self.unary()? == 0));
        }
        if self.eat("~") {
            return Some(!self.unary()?);
        }
        if self.eat("-") {
            return Some(self.unary()?.wrapping_neg());
        }
        if self.eat("+") {
            return self.unary();
        }
        if self.eat("(") {
            let v = self.ternary()?;
            return self.eat(")").then_some(v);
        }
        match self.tokens.get(self.at)?.clone() {
            CTok::Int(v) => {
                self.at += 1;
                Some(v)
            }
            CTok::Ident(name) if name == "defined" => {
                self.at += 1;
                let paren = self.eat("(");
                let Some(CTok::Ident(m)) = self.tokens.get(self.at).cloned() else {
                    return None;
                };
                self.at += 1;
                if paren && !self.eat(")") {
                    return None;
                }
                Some(i64::from((self.defined)(&m)))
            }
            CTok::Ident(name) => {
                self.at += 1;
                (self.value)(&name)
            }
            CTok::Op(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(defs: &[(&str, &str)], expr: &str) -> bool {
        let predefined = |n: &str| n == "BPFTRACE_HAVE_BTF";
        let mut c = Conditionals::new(&predefined);
        for (name, body) in defs {
            c.directive(&format!("#define {name} {body}"), Span::default())
                .unwrap();
        }
        c.condition(expr)
    }

    #[test]
    fn if_expressions_as_cpp_evaluates_them() {
        assert!(eval(&[], "1"));
        assert!(!eval(&[], "0"));
        assert!(eval(&[], "defined(BPFTRACE_HAVE_BTF)"));
        assert!(eval(&[], "defined BPFTRACE_HAVE_BTF && !defined(FOO)"));
        assert!(!eval(&[], "UNKNOWN_NAME"));
        assert!(eval(&[("V", "3")], "V >= 2 && V < 4"));
        assert!(eval(&[("V", "(1 << 4)")], "V == 16"));
        assert!(eval(&[("A", "B"), ("B", "0x10")], "A == 16"));
        assert!(eval(&[], "(2 + 3) * 2 == 10 ? 1 : 0"));
        assert!(!eval(&[], "1 / 0"));
        assert!(!eval(&[], "1 +"));
        assert!(!eval(&[], "\"str\""));
    }

    #[test]
    fn groups_nest_and_take_one_branch() {
        let predefined = |n: &str| n == "BPFTRACE_HAVE_BTF";
        let mut c = Conditionals::new(&predefined);
        let sp = Span::default();
        c.directive("#ifndef BPFTRACE_HAVE_BTF", sp).unwrap();
        assert!(!c.active());
        c.directive("#if 1", sp).unwrap();
        assert!(!c.active(), "a true #if inside a false group stays off");
        c.directive("#endif", sp).unwrap();
        c.directive("#elif 1", sp).unwrap();
        assert!(c.active());
        c.directive("#else", sp).unwrap();
        assert!(!c.active(), "only one branch is taken");
        c.directive("#endif", sp).unwrap();
        assert!(c.active());
        assert!(c.directive("#endif", sp).is_err());
        c.directive("#if 0", sp).unwrap();
        c.directive("#else", sp).unwrap();
        assert!(c.directive("#else", sp).is_err());
        assert_eq!(c.unterminated().count(), 1);
    }

    #[test]
    fn defines_and_undefs_are_seen_by_later_conditions() {
        let predefined = |_: &str| false;
        let mut c = Conditionals::new(&predefined);
        let sp = Span::default();
        assert_eq!(c.directive("#define DEBUG", sp), Ok(Effect::Keep));
        assert!(c.is_defined("DEBUG"));
        c.directive("#undef DEBUG", sp).unwrap();
        assert!(!c.is_defined("DEBUG"));
        // A define inside a false group does not count.
        c.directive("#if 0", sp).unwrap();
        c.directive("#define HIDDEN 1", sp).unwrap();
        c.directive("#endif", sp).unwrap();
        assert!(!c.is_defined("HIDDEN"));
    }
}
