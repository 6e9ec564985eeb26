//! On-demand lexer: the parser asks for the token at a byte offset.
//!
//! Lexing is pure: [`lex_token`] returns the token together with the
//! diagnostics it would raise, and the parser reports them only when it
//! consumes the token, so speculative look-ahead never reports twice.

use crate::ast::{IntForm, TimeUnit};
use crate::diagnostics as diag;
use source::{Diagnostic, Span};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident,
    /// Integer (value 0 when invalid; a diagnostic is attached).
    Int(u64, IntForm),
    Str(Vec<u8>),
    /// `$name`.
    Var,
    /// `@name` or `@`.
    Map,
    Positional(u32),
    PositionalCount,
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Semi,
    Colon,
    Question,
    Dot,
    DotDot,
    Arrow,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    Pipe,
    Caret,
    Bang,
    Tilde,
    Lt,
    Gt,
    Le,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Shl,
    Shr,
    Eq,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    PercentEq,
    AmpEq,
    PipeEq,
    CaretEq,
    ShlEq,
    ShrEq,
    PlusPlus,
    MinusMinus,
    Hash,
    /// A character that starts no token.
    Unknown(char),
    Eof,
}

impl Tok {
    /// How the token is named in "expected X, found Y" messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Tok::Ident => "identifier",
            Tok::Int(..) => "integer",
            Tok::Str(_) => "string",
            Tok::Var => "variable",
            Tok::Map => "map",
            Tok::Positional(_) | Tok::PositionalCount => "positional parameter",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::Comma => "`,`",
            Tok::Semi => "`;`",
            Tok::Colon => "`:`",
            Tok::Question => "`?`",
            Tok::Dot => "`.`",
            Tok::DotDot => "`..`",
            Tok::Arrow => "`->`",
            Tok::Plus => "`+`",
            Tok::Minus => "`-`",
            Tok::Star => "`*`",
            Tok::Slash => "`/`",
            Tok::Percent => "`%`",
            Tok::Amp => "`&`",
            Tok::Pipe => "`|`",
            Tok::Caret => "`^`",
            Tok::Bang => "`!`",
            Tok::Tilde => "`~`",
            Tok::Lt => "`<`",
            Tok::Gt => "`>`",
            Tok::Le => "`<=`",
            Tok::Ge => "`>=`",
            Tok::EqEq => "`==`",
            Tok::Ne => "`!=`",
            Tok::AndAnd => "`&&`",
            Tok::OrOr => "`||`",
            Tok::Shl => "`<<`",
            Tok::Shr => "`>>`",
            Tok::Eq => "`=`",
            Tok::PlusEq => "`+=`",
            Tok::MinusEq => "`-=`",
            Tok::StarEq => "`*=`",
            Tok::SlashEq => "`/=`",
            Tok::PercentEq => "`%=`",
            Tok::AmpEq => "`&=`",
            Tok::PipeEq => "`|=`",
            Tok::CaretEq => "`^=`",
            Tok::ShlEq => "`<<=`",
            Tok::ShrEq => "`>>=`",
            Tok::PlusPlus => "`++`",
            Tok::MinusMinus => "`--`",
            Tok::Hash => "`#`",
            Tok::Unknown(_) => "unknown character",
            Tok::Eof => "end of file",
        }
    }
}

/// A token with its file-relative byte range.
#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

pub fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

pub fn is_ident_body(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Skips whitespace and comments from `pos`; returns the new position and an
/// unterminated-comment diagnostic if one was found.
pub fn skip_trivia(src: &[u8], mut pos: usize, base: u32) -> (usize, Option<Diagnostic>) {
    loop {
        while pos < src.len() && src[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if src[pos..].starts_with(b"//") {
            while pos < src.len() && src[pos] != b'\n' {
                pos += 1;
            }
        } else if src[pos..].starts_with(b"/*") {
            let start = pos;
            match find(src, pos + 2, b"*/") {
                Some(end) => pos = end + 2,
                None => {
                    let d = diag::unterminated_comment(span(base, start, start + 2));
                    return (src.len(), Some(d));
                }
            }
        } else {
            return (pos, None);
        }
    }
}

fn find(src: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    src.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

pub fn span(base: u32, start: usize, end: usize) -> Span {
    Span::new(base + start as u32, base + end as u32)
}

/// Lexes one token starting at `pos` (which must be past trivia).
pub fn lex_token(src: &[u8], pos: usize, base: u32) -> (Token, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let tok_at = |tok, len: usize| Token {
        tok,
        start: pos,
        end: pos + len,
    };
    let Some(&c) = src.get(pos) else {
        return (tok_at(Tok::Eof, 0), diags);
    };
    let at = |i: usize| src.get(pos + i).copied().unwrap_or(0);
    let tok = match c {
        b'(' => tok_at(Tok::LParen, 1),
        b')' => tok_at(Tok::RParen, 1),
        b'{' => tok_at(Tok::LBrace, 1),
        b'}' => tok_at(Tok::RBrace, 1),
        b'[' => tok_at(Tok::LBracket, 1),
        b']' => tok_at(Tok::RBracket, 1),
        b',' => tok_at(Tok::Comma, 1),
        b';' => tok_at(Tok::Semi, 1),
        b':' => tok_at(Tok::Colon, 1),
        b'?' => tok_at(Tok::Question, 1),
        b'~' => tok_at(Tok::Tilde, 1),
        b'#' => tok_at(Tok::Hash, 1),
        b'.' if at(1) == b'.' => tok_at(Tok::DotDot, 2),
        b'.' => tok_at(Tok::Dot, 1),
        b'+' if at(1) == b'+' => tok_at(Tok::PlusPlus, 2),
        b'+' if at(1) == b'=' => tok_at(Tok::PlusEq, 2),
        b'+' => tok_at(Tok::Plus, 1),
        b'-' if at(1) == b'-' => tok_at(Tok::MinusMinus, 2),
        b'-' if at(1) == b'=' => tok_at(Tok::MinusEq, 2),
        b'-' if at(1) == b'>' => tok_at(Tok::Arrow, 2),
        b'-' => tok_at(Tok::Minus, 1),
        b'*' if at(1) == b'=' => tok_at(Tok::StarEq, 2),
        b'*' => tok_at(Tok::Star, 1),
        b'/' if at(1) == b'=' => tok_at(Tok::SlashEq, 2),
        b'/' => tok_at(Tok::Slash, 1),
        b'%' if at(1) == b'=' => tok_at(Tok::PercentEq, 2),
        b'%' => tok_at(Tok::Percent, 1),
        b'&' if at(1) == b'&' => tok_at(Tok::AndAnd, 2),
        b'&' if at(1) == b'=' => tok_at(Tok::AmpEq, 2),
        b'&' => tok_at(Tok::Amp, 1),
        b'|' if at(1) == b'|' => tok_at(Tok::OrOr, 2),
        b'|' if at(1) == b'=' => tok_at(Tok::PipeEq, 2),
        b'|' => tok_at(Tok::Pipe, 1),
        b'^' if at(1) == b'=' => tok_at(Tok::CaretEq, 2),
        b'^' => tok_at(Tok::Caret, 1),
        b'!' if at(1) == b'=' => tok_at(Tok::Ne, 2),
        b'!' => tok_at(Tok::Bang, 1),
        b'=' if at(1) == b'=' => tok_at(Tok::EqEq, 2),
        b'=' => tok_at(Tok::Eq, 1),
        b'<' if at(1) == b'<' && at(2) == b'=' => tok_at(Tok::ShlEq, 3),
        b'<' if at(1) == b'<' => tok_at(Tok::Shl, 2),
        b'<' if at(1) == b'=' => tok_at(Tok::Le, 2),
        b'<' => tok_at(Tok::Lt, 1),
        b'>' if at(1) == b'>' && at(2) == b'=' => tok_at(Tok::ShrEq, 3),
        b'>' if at(1) == b'>' => tok_at(Tok::Shr, 2),
        b'>' if at(1) == b'=' => tok_at(Tok::Ge, 2),
        b'>' => tok_at(Tok::Gt, 1),
        b'"' => lex_string(src, pos, base, &mut diags),
        b'\'' => lex_char(src, pos, base, &mut diags),
        b'0'..=b'9' => lex_int(src, pos, base, &mut diags),
        b'$' if at(1) == b'#' => tok_at(Tok::PositionalCount, 2),
        b'$' if at(1).is_ascii_digit() => {
            let end = scan_while(src, pos + 1, |b| b.is_ascii_digit());
            let text = std::str::from_utf8(&src[pos + 1..end]).unwrap_or("");
            let n = match text.parse::<u32>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    diags.push(diag::positional_out_of_range(span(base, pos, end)));
                    0
                }
            };
            Token {
                tok: Tok::Positional(n),
                start: pos,
                end,
            }
        }
        b'$' if is_ident_start(at(1)) => Token {
            tok: Tok::Var,
            start: pos,
            end: scan_while(src, pos + 1, is_ident_body),
        },
        b'@' => Token {
            tok: Tok::Map,
            start: pos,
            end: scan_while(src, pos + 1, is_ident_body),
        },
        c if is_ident_start(c) => Token {
            tok: Tok::Ident,
            start: pos,
            end: scan_while(src, pos, is_ident_body),
        },
        _ => {
            let text = std::str::from_utf8(&src[pos..]).unwrap_or("");
            let ch = text.chars().next().unwrap_or('\u{fffd}');
            let len = ch.len_utf8().max(1);
            diags.push(diag::unexpected_char(span(base, pos, pos + len), ch));
            tok_at(Tok::Unknown(ch), len)
        }
    };
    (tok, diags)
}

fn scan_while(src: &[u8], mut pos: usize, f: impl Fn(u8) -> bool) -> usize {
    while pos < src.len() && f(src[pos]) {
        pos += 1;
    }
    pos
}

fn lex_string(src: &[u8], start: usize, base: u32, diags: &mut Vec<Diagnostic>) -> Token {
    let mut out = Vec::new();
    let mut pos = start + 1;
    loop {
        match src.get(pos) {
            None | Some(b'\n') => {
                diags.push(diag::unterminated_string(span(base, start, pos)));
                break;
            }
            Some(b'"') => {
                pos += 1;
                break;
            }
            Some(b'\\') => {
                let esc_start = pos;
                pos += 1;
                let Some(&e) = src.get(pos) else {
                    continue;
                };
                pos += 1;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'"' => out.push(b'"'),
                    b'\\' => out.push(b'\\'),
                    b'0'..=b'7' => {
                        let end = (pos..pos + 2)
                            .take_while(|&i| matches!(src.get(i), Some(b'0'..=b'7')))
                            .last()
                            .map_or(pos, |i| i + 1);
                        let digits = std::str::from_utf8(&src[pos - 1..end]).unwrap_or("0");
                        let value = u32::from_str_radix(digits, 8).unwrap_or(0);
                        if value > 255 {
                            diags.push(diag::octal_escape_out_of_range(span(base, esc_start, end)));
                        }
                        out.push(value as u8);
                        pos = end;
                    }
                    b'x' | b'X' => {
                        let end = (pos..pos + 2)
                            .take_while(|&i| src.get(i).is_some_and(u8::is_ascii_hexdigit))
                            .last()
                            .map_or(pos, |i| i + 1);
                        if end == pos {
                            diags.push(diag::invalid_hex_escape(span(base, esc_start, pos)));
                        } else {
                            let digits = std::str::from_utf8(&src[pos..end]).unwrap_or("0");
                            out.push(u8::from_str_radix(digits, 16).unwrap_or(0));
                        }
                        pos = end;
                    }
                    b'\n' => {
                        diags.push(diag::unterminated_string(span(base, start, pos - 1)));
                        break;
                    }
                    _ => {
                        let text = std::str::from_utf8(&src[pos - 1..]).unwrap_or("");
                        let ch = text.chars().next().unwrap_or('\u{fffd}');
                        pos = pos - 1 + ch.len_utf8().max(1);
                        diags.push(diag::unknown_escape(span(base, esc_start, pos), ch));
                    }
                }
            }
            Some(&b) => {
                out.push(b);
                pos += 1;
            }
        }
    }
    Token {
        tok: Tok::Str(out),
        start,
        end: pos,
    }
}

fn lex_char(src: &[u8], start: usize, base: u32, diags: &mut Vec<Diagnostic>) -> Token {
    // 'c' or '\n'-style escapes of one byte.
    let (value, len) = match (src.get(start + 1), src.get(start + 2)) {
        (Some(b'\\'), Some(&e)) => {
            let v = match e {
                b'n' => Some(b'\n'),
                b't' => Some(b'\t'),
                b'r' => Some(b'\r'),
                b'0' => Some(0),
                b'\\' => Some(b'\\'),
                b'\'' => Some(b'\''),
                _ => None,
            };
            (v, 2)
        }
        (Some(&c), _) if c != b'\'' && c != b'\n' && c.is_ascii() => (Some(c), 1),
        _ => (None, 1),
    };
    let close = start + 1 + len;
    match (value, src.get(close)) {
        (Some(v), Some(b'\'')) => Token {
            tok: Tok::Int(v as u64, IntForm::Char),
            start,
            end: close + 1,
        },
        _ => {
            let end = (start + 1..src.len().min(start + 8))
                .find(|&i| src[i] == b'\'' || src[i] == b'\n')
                .map_or(start + 1, |i| if src[i] == b'\'' { i + 1 } else { i });
            diags.push(diag::invalid_char_literal(span(base, start, end)));
            Token {
                tok: Tok::Int(0, IntForm::Char),
                start,
                end,
            }
        }
    }
}

/// Integers: decimal with `_`, `0x` hex, `0b` binary, `0o`/leading-`0` octal,
/// `e` exponent, then a C suffix or a duration suffix.
fn lex_int(src: &[u8], start: usize, base: u32, diags: &mut Vec<Diagnostic>) -> Token {
    let at = |i: usize| src.get(i).copied().unwrap_or(0);
    let (radix, digits_start) = match (at(start), at(start + 1)) {
        (b'0', b'x' | b'X') => (16, start + 2),
        (b'0', b'b' | b'B') => (2, start + 2),
        (b'0', b'o' | b'O') => (8, start + 2),
        (b'0', b'0'..=b'9' | b'_') => (8, start + 1),
        _ => (10, start),
    };
    let digits_end = scan_while(src, digits_start, |b| {
        b == b'_'
            || if radix == 16 {
                b.is_ascii_hexdigit()
            } else {
                b.is_ascii_digit()
            }
    });
    let mut end = digits_end;
    let mut exponent = None;
    if radix == 10 && matches!(at(end), b'e' | b'E') && at(end + 1).is_ascii_digit() {
        let exp_end = scan_while(src, end + 1, |b| b.is_ascii_digit() || b == b'_');
        exponent = Some(
            std::str::from_utf8(&src[end + 1..exp_end])
                .unwrap_or("")
                .replace('_', ""),
        );
        end = exp_end;
    }
    let suffix_end = scan_while(src, end, is_ident_body);
    let suffix = std::str::from_utf8(&src[end..suffix_end]).unwrap_or("");
    let form = match suffix.to_ascii_lowercase().as_str() {
        "" => Some(IntForm::Plain),
        "u" | "l" | "ul" | "ll" | "ull" | "lu" | "llu" => Some(IntForm::CSuffix),
        _ => match suffix {
            "ns" => Some(IntForm::Duration(TimeUnit::Ns)),
            "us" => Some(IntForm::Duration(TimeUnit::Us)),
            "ms" => Some(IntForm::Duration(TimeUnit::Ms)),
            "s" => Some(IntForm::Duration(TimeUnit::S)),
            "m" => Some(IntForm::Duration(TimeUnit::M)),
            "h" => Some(IntForm::Duration(TimeUnit::H)),
            "d" => Some(IntForm::Duration(TimeUnit::D)),
            _ => None,
        },
    };
    let whole = span(base, start, suffix_end);
    let text = std::str::from_utf8(&src[start..suffix_end]).unwrap_or("");
    let mk = |value, form| Token {
        tok: Tok::Int(value, form),
        start,
        end: suffix_end,
    };
    let Some(form) = form else {
        diags.push(diag::invalid_int_suffix(
            span(base, end, suffix_end),
            suffix,
        ));
        return mk(0, IntForm::Plain);
    };
    let raw = std::str::from_utf8(&src[digits_start..digits_end]).unwrap_or("");
    if raw.is_empty() && radix != 8 || raw.ends_with('_') {
        diags.push(diag::invalid_int(whole, text));
        return mk(0, form);
    }
    let digits = raw.replace('_', "");
    if radix != 10
        && digits
            .bytes()
            .any(|b| (b - b'0') as u32 >= radix && radix < 16)
    {
        diags.push(diag::invalid_int(whole, text));
        return mk(0, form);
    }
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits
    };
    let mut value = u64::from_str_radix(&digits, radix).ok();
    if let Some(exp) = exponent {
        let exp: Option<u32> = exp.parse().ok();
        value = value
            .zip(exp)
            .and_then(|(v, e)| v.checked_mul(10u64.checked_pow(e)?));
    }
    if let IntForm::Duration(unit) = form {
        value = value.and_then(|v| v.checked_mul(unit.nanos()));
    }
    match value {
        Some(v) => mk(v, form),
        None => {
            diags.push(diag::int_too_large(whole, text));
            mk(0, form)
        }
    }
}
