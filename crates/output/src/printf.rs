//! bpftrace's printf: a format string is parsed once and rendered per event.
//!
//! bpftrace 0.17 (`format_string.cpp`) finds conversions with the regex
//! `%-?[0-9]*(\.[0-9]+)?(s|r|rx|rh|c|[hh|h|l|ll|j|z|t]?[duoxXp])`, splits the
//! format after each match, hands each piece with its argument to C's
//! `snprintf`, keeps the output up to its first NUL, and appends the text
//! after the last conversion *unprocessed*. Hence the quirks reproduced here:
//! `%%` prints `%` before the last conversion but `%%` after it; `%c` of 0
//! prints nothing; `%d` takes the low 32 bits and `%hhd` the low 8; `%p` of
//! 0 prints `(nil)`. Each piece is interpreted here as glibc would. `%i`
//! (which bpftrace 0.17 lacks) is accepted as C's synonym of `%d`.

use crate::value::Value;

/// What a conversion takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// `%d %u %o %x %X %c %p` with any length modifier: integers and pointers.
    Integer,
    /// `%s`.
    String,
    /// `%r %rx %rh`: a `buf()`.
    Buffer,
}

/// A format string bpftrace would reject or that would make its C printf
/// read a missing argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// Byte offset in the format string.
    pub offset: usize,
    pub message: String,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

/// A conversion as bpftrace's type checker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    /// Byte range in the format string, from the `%`.
    pub start: usize,
    pub end: usize,
    /// The specifier without `%`, flags, width or precision (`lld`, `s`),
    /// as bpftrace names it in messages ("%lld specifier expects ...").
    pub specifier: String,
    pub kind: ArgKind,
}

/// Finds the conversions and their argument kinds, or the first problem.
pub fn validate(format: &str) -> Result<Vec<ArgKind>, FormatError> {
    let parsed = Format::parse(format);
    match parsed.error {
        Some(error) => Err(error),
        None => Ok(parsed.conversions.iter().map(|c| c.kind).collect()),
    }
}

/// A parsed format string, ready to render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    conversions: Vec<Conversion>,
    /// One piece per conversion, each interpreted like C printf with that argument.
    pieces: Vec<Vec<Piece>>,
    /// The text after the last conversion, printed verbatim.
    trailing: Vec<u8>,
    error: Option<FormatError>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Literal(Vec<u8>),
    Directive(Directive),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Flags {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alternate: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Length {
    Char,
    Short,
    Int,
    Long,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BufferMode {
    /// `%r`: printable ASCII kept, other bytes as `\xNN`.
    Mixed,
    /// `%rx`: every byte as `\xNN`.
    Escaped,
    /// `%rh`: every byte as `NN`, space separated.
    Hex,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Directive {
    flags: Flags,
    width: usize,
    precision: Option<usize>,
    length: Length,
    conversion: u8,
    buffer: BufferMode,
}

/// Widths and precisions beyond this are treated as this, so a hostile
/// format cannot make us allocate gigabytes.
const MAX_WIDTH: usize = 4096;

impl Format {
    /// Parses `format`. Never fails: problems are kept for [`Format::validate`]
    /// and the best-effort rendering prints unsupported directives literally.
    pub fn parse(format: &str) -> Format {
        let bytes = format.as_bytes();
        let mut conversions = Vec::new();
        let mut pieces = Vec::new();
        let mut error = None;
        let mut last = 0;
        let mut at = 0;
        while at < bytes.len() {
            if bytes[at] != b'%' {
                at += 1;
                continue;
            }
            let Some((end, specifier)) = match_conversion(bytes, at) else {
                at += 1;
                continue;
            };
            let kind = match specifier.as_str() {
                "s" => ArgKind::String,
                "r" | "rx" | "rh" => ArgKind::Buffer,
                _ => ArgKind::Integer,
            };
            let (piece, piece_error) = parse_piece(bytes, last, end);
            if error.is_none() {
                error = piece_error;
            }
            pieces.push(piece);
            conversions.push(Conversion {
                start: at,
                end,
                specifier,
                kind,
            });
            last = end;
            at = end;
        }
        Format {
            conversions,
            pieces,
            trailing: bytes[last..].to_vec(),
            error,
        }
    }

    pub fn conversions(&self) -> &[Conversion] {
        &self.conversions
    }

    /// The argument kinds, or the first problem found while parsing.
    pub fn validate(&self) -> Result<Vec<ArgKind>, FormatError> {
        match &self.error {
            Some(error) => Err(error.clone()),
            None => Ok(self.conversions.iter().map(|c| c.kind).collect()),
        }
    }

    /// Renders with `args` (one per conversion; missing ones print as 0 or empty).
    pub fn render(&self, args: &[Value]) -> Vec<u8> {
        let mut out = Vec::new();
        self.render_into(args, &mut out);
        out
    }

    /// [`Format::render`], appending to `out` (so a caller can reuse one buffer).
    pub fn render_into(&self, args: &[Value], out: &mut Vec<u8>) {
        for (index, piece) in self.pieces.iter().enumerate() {
            let arg = args.get(index).unwrap_or(&Value::None);
            let start = out.len();
            for part in piece {
                match part {
                    Piece::Literal(text) => out.extend_from_slice(text),
                    Piece::Directive(directive) => format_directive(directive, arg, out),
                }
            }
            // bpftrace streams the snprintf buffer as a C string.
            if let Some(nul) = out[start..].iter().position(|&b| b == 0) {
                out.truncate(start + nul);
            }
        }
        out.extend_from_slice(&self.trailing);
    }
}

/// The bpftrace conversion regex anchored at `start` (a `%`): the end of the
/// match and the specifier.
fn match_conversion(bytes: &[u8], start: usize) -> Option<(usize, String)> {
    let mut i = start + 1;
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    let rest = &bytes[i..];
    let simple = [&b"rx"[..], b"rh", b"s", b"r", b"c"];
    if let Some(s) = simple.iter().find(|s| rest.starts_with(s)) {
        return Some((i + s.len(), String::from_utf8_lossy(s).into_owned()));
    }
    for length in [&b"hh"[..], b"h", b"ll", b"l", b"j", b"z", b"t", b""] {
        if let Some(after) = rest.strip_prefix(length)
            && let Some(&c) = after.first()
            && b"diuoxXp".contains(&c)
        {
            let end = i + length.len() + 1;
            return Some((end, String::from_utf8_lossy(&bytes[i..end]).into_owned()));
        }
    }
    None
}

/// Interprets `bytes[from..to]`, which ends with a conversion, like glibc printf.
fn parse_piece(bytes: &[u8], from: usize, to: usize) -> (Vec<Piece>, Option<FormatError>) {
    let mut pieces = Vec::new();
    let mut literal = Vec::new();
    let mut error = None;
    let mut consumed = false;
    let mut i = from;
    while i < to {
        if bytes[i] != b'%' {
            literal.push(bytes[i]);
            i += 1;
            continue;
        }
        let start = i;
        match parse_directive(&bytes[..to], start) {
            Ok((None, end)) => {
                literal.push(b'%');
                i = end;
            }
            Ok((Some(directive), end)) => {
                // Only the conversion bpftrace matched, which ends the piece,
                // gets the argument; C printf would read garbage for any other.
                if end == to && !consumed {
                    consumed = true;
                    if !literal.is_empty() {
                        pieces.push(Piece::Literal(std::mem::take(&mut literal)));
                    }
                    pieces.push(Piece::Directive(directive));
                } else {
                    error.get_or_insert(FormatError {
                        offset: start,
                        message: format!(
                            "`{}` is not a conversion bpftrace supports here; write `%%` for a literal `%`",
                            String::from_utf8_lossy(&bytes[start..end])
                        ),
                    });
                    literal.extend_from_slice(&bytes[start..end]);
                }
                i = end;
            }
            Err((end, message)) => {
                error.get_or_insert(FormatError {
                    offset: start,
                    message,
                });
                literal.extend_from_slice(&bytes[start..end]);
                i = end;
            }
        }
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    (pieces, error)
}

/// A C printf directive at `start`: `Ok((None, end))` for `%%`.
#[allow(
    clippy::type_complexity,
    reason = "a private two-outcome parser result"
)]
fn parse_directive(
    bytes: &[u8],
    start: usize,
) -> Result<(Option<Directive>, usize), (usize, String)> {
    let mut i = start + 1;
    let mut flags = Flags::default();
    while let Some(&c) = bytes.get(i) {
        match c {
            b'-' => flags.left = true,
            b'0' => flags.zero = true,
            b'+' => flags.plus = true,
            b' ' => flags.space = true,
            b'#' => flags.alternate = true,
            _ => break,
        }
        i += 1;
    }
    let mut width = 0usize;
    while let Some(&c) = bytes.get(i).filter(|c| c.is_ascii_digit()) {
        width = (width * 10 + usize::from(c - b'0')).min(MAX_WIDTH);
        i += 1;
    }
    let mut precision = None;
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        let mut p = 0usize;
        while let Some(&c) = bytes.get(i).filter(|c| c.is_ascii_digit()) {
            p = (p * 10 + usize::from(c - b'0')).min(MAX_WIDTH);
            i += 1;
        }
        precision = Some(p);
    }
    let rest = &bytes[i.min(bytes.len())..];
    let (length, skip) = if rest.starts_with(b"hh") {
        (Length::Char, 2)
    } else if rest.starts_with(b"ll") {
        (Length::Long, 2)
    } else {
        match rest.first() {
            Some(b'h') => (Length::Short, 1),
            Some(b'l' | b'j' | b'z' | b't') => (Length::Long, 1),
            _ => (Length::Int, 0),
        }
    };
    i += skip;
    let Some(&conversion) = bytes.get(i) else {
        return Err((
            bytes.len(),
            "the format ends inside a conversion".to_string(),
        ));
    };
    i += 1;
    let mut buffer = BufferMode::Mixed;
    match conversion {
        b'%' => return Ok((None, i)),
        b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'c' | b's' | b'p' => {}
        // bpftrace rewrites exactly `%r`, `%rx` and `%rh` to `%s`.
        b'r' if i == start + 2 => match bytes.get(i) {
            Some(b'x') => {
                buffer = BufferMode::Escaped;
                i += 1;
            }
            Some(b'h') => {
                buffer = BufferMode::Hex;
                i += 1;
            }
            _ => {}
        },
        other => {
            return Err((
                i,
                format!(
                    "unsupported conversion `{}` (`{}`)",
                    other as char,
                    String::from_utf8_lossy(&bytes[start..i])
                ),
            ));
        }
    }
    Ok((
        Some(Directive {
            flags,
            width,
            precision,
            length,
            conversion,
            buffer,
        }),
        i,
    ))
}

fn format_directive(d: &Directive, arg: &Value, out: &mut Vec<u8>) {
    match d.conversion {
        b's' => {
            let text = match arg {
                Value::Str(bytes) => bytes.clone(),
                Value::Stack(stack) => crate::stack::stack_text(stack, 8),
                other => crate::text::value_text(other),
            };
            let cut = d.precision.map_or(text.len(), |p| p.min(text.len()));
            pad(out, d, &[], &text[..cut], false);
        }
        b'r' => {
            let bytes = match arg {
                Value::Bytes(bytes) | Value::Str(bytes) => bytes.as_slice(),
                _ => &[],
            };
            let text = hex_format_buffer(bytes, d.buffer);
            let cut = d.precision.map_or(text.len(), |p| p.min(text.len()));
            pad(out, d, &[], &text[..cut], false);
        }
        b'c' => pad(out, d, &[], &[arg.as_bits() as u8], false),
        b'p' => {
            let bits = arg.as_bits();
            if bits == 0 {
                pad(out, d, &[], b"(nil)", false);
            } else {
                let mut pointer = *d;
                pointer.flags.alternate = true;
                pointer.length = Length::Long;
                pointer.conversion = b'x';
                format_integer(&pointer, bits, out);
            }
        }
        _ => format_integer(d, arg.as_bits(), out),
    }
}

/// C's integer conversions of the argument's 64-bit pattern after the
/// length modifier's truncation (varargs pass 64 bits; `%d` reads 32).
fn format_integer(d: &Directive, bits: u64, out: &mut Vec<u8>) {
    let signed = matches!(d.conversion, b'd' | b'i');
    let (negative, magnitude) = if signed {
        let v = match d.length {
            Length::Char => i64::from(bits as i8),
            Length::Short => i64::from(bits as i16),
            Length::Int => i64::from(bits as i32),
            Length::Long => bits as i64,
        };
        (v < 0, v.unsigned_abs())
    } else {
        let v = match d.length {
            Length::Char => u64::from(bits as u8),
            Length::Short => u64::from(bits as u16),
            Length::Int => u64::from(bits as u32),
            Length::Long => bits,
        };
        (false, v)
    };
    let (radix, upper) = match d.conversion {
        b'o' => (8, false),
        b'x' => (16, false),
        b'X' => (16, true),
        _ => (10, false),
    };
    // Digits, right-aligned (22 octal digits at most).
    let mut buf = [0u8; 24];
    let mut start = buf.len();
    let mut rest = magnitude;
    loop {
        let digit = (rest % radix) as u8;
        start -= 1;
        buf[start] = match digit {
            0..=9 => b'0' + digit,
            _ if upper => b'A' + digit - 10,
            _ => b'a' + digit - 10,
        };
        rest /= radix;
        if rest == 0 {
            break;
        }
    }
    if d.precision == Some(0) && magnitude == 0 {
        start = buf.len();
    }
    let digits = &buf[start..];
    // Zeros in front of the digits: up to the precision, or the octal `#` zero.
    let mut zeros = d.precision.map_or(0, |p| p.saturating_sub(digits.len()));
    let mut prefix = [0u8; 3];
    let mut prefix_len = 0;
    let mut push = |bytes: &[u8]| {
        prefix[prefix_len..prefix_len + bytes.len()].copy_from_slice(bytes);
        prefix_len += bytes.len();
    };
    if negative {
        push(b"-");
    } else if d.flags.plus && signed {
        push(b"+");
    } else if d.flags.space && signed {
        push(b" ");
    }
    if d.flags.alternate {
        match d.conversion {
            b'o' if zeros == 0 && digits.first() != Some(&b'0') => zeros = 1,
            b'x' if magnitude != 0 => push(b"0x"),
            b'X' if magnitude != 0 => push(b"0X"),
            _ => {}
        }
    }
    let prefix = &prefix[..prefix_len];
    let fill = d.width.saturating_sub(prefix.len() + zeros + digits.len());
    if d.flags.left {
        out.extend_from_slice(prefix);
        out.resize(out.len() + zeros, b'0');
        out.extend_from_slice(digits);
        out.resize(out.len() + fill, b' ');
    } else if d.flags.zero && d.precision.is_none() {
        out.extend_from_slice(prefix);
        out.resize(out.len() + fill + zeros, b'0');
        out.extend_from_slice(digits);
    } else {
        out.resize(out.len() + fill, b' ');
        out.extend_from_slice(prefix);
        out.resize(out.len() + zeros, b'0');
        out.extend_from_slice(digits);
    }
}

/// Writes `prefix` and `body` padded to the directive's width.
fn pad(out: &mut Vec<u8>, d: &Directive, prefix: &[u8], body: &[u8], zero_fill: bool) {
    let len = prefix.len() + body.len();
    let fill = d.width.saturating_sub(len);
    if d.flags.left {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.resize(out.len() + fill, b' ');
    } else if zero_fill {
        out.extend_from_slice(prefix);
        out.resize(out.len() + fill, b'0');
        out.extend_from_slice(body);
    } else {
        out.resize(out.len() + fill, b' ');
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

/// bpftrace's `hex_format_buffer`.
fn hex_format_buffer(bytes: &[u8], mode: BufferMode) -> Vec<u8> {
    let mut out = Vec::new();
    for (index, &b) in bytes.iter().enumerate() {
        match mode {
            BufferMode::Mixed if (32..=126).contains(&b) => out.push(b),
            BufferMode::Mixed | BufferMode::Escaped => {
                out.extend_from_slice(format!("\\x{b:02x}").as_bytes())
            }
            BufferMode::Hex => {
                out.extend_from_slice(format!("{b:02x}").as_bytes());
                if index + 1 < bytes.len() {
                    out.push(b' ');
                }
            }
        }
    }
    out
}
