//! bpftrace's printf format, parsed once: sema checks the arguments against
//! the conversions, and the manifest carries the parsed [`Format`] to user
//! space, which renders it per event (`output::printf`).
//!
//! bpftrace 0.17 (`format_string.cpp`) finds conversions with the regex
//! `%-?[0-9]*(\.[0-9]+)?(s|r|rx|rh|c|[hh|h|l|ll|j|z|t]?[duoxXp])`, splits the
//! format after each match, hands each piece with its argument to C's
//! `snprintf`, keeps the output up to its first NUL, and appends the text
//! after the last conversion *unprocessed*. Hence the quirks the parse keeps:
//! `%%` prints `%` before the last conversion but `%%` after it. Each piece
//! is interpreted here as glibc would. `%i` (which bpftrace 0.17 lacks) is
//! accepted as C's synonym of `%d`.

/// What a conversion takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// `%d %u %o %x %X %c %p` with any length modifier: integers and
    /// pointers; `%gr`, GFP flags.
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
    /// The format as written, escapes resolved.
    text: String,
    conversions: Vec<Conversion>,
    /// One piece per conversion, each interpreted like C printf with that argument.
    pieces: Vec<Vec<Piece>>,
    /// The text after the last conversion, printed verbatim.
    trailing: Vec<u8>,
    error: Option<FormatError>,
}

/// Part of one piece: text, or the directive that takes the argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Literal(Vec<u8>),
    Directive(Directive),
}

/// C printf flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    pub left: bool,
    pub zero: bool,
    pub plus: bool,
    pub space: bool,
    pub alternate: bool,
}

/// How many bits of the argument an integer conversion reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    Char,
    Short,
    Int,
    Long,
}

/// How `%r` prints a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferMode {
    /// `%r`: printable ASCII kept, other bytes as `\xNN`.
    Mixed,
    /// `%rx`: every byte as `\xNN`.
    Escaped,
    /// `%rh`: every byte as `NN`, space separated.
    Hex,
}

/// One C printf directive, as glibc interprets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Directive {
    pub flags: Flags,
    pub width: usize,
    pub precision: Option<usize>,
    pub length: Length,
    /// The conversion character (`d`, `s`, `x`, `r`, `g` for `%gr`, ...).
    pub conversion: u8,
    pub buffer: BufferMode,
}

/// Widths and precisions beyond this are treated as this, so a hostile
/// format cannot make us allocate gigabytes.
const MAX_WIDTH: usize = 4096;

impl Format {
    /// Parses `format`. Never fails: problems are kept for [`Format::validate`]
    /// and a best-effort rendering prints unsupported directives literally.
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
            text: format.to_string(),
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

    /// The format as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// One piece per conversion: the text before it and the directive that
    /// takes its argument, to be rendered like C's `snprintf` of that piece.
    pub fn pieces(&self) -> &[Vec<Piece>] {
        &self.pieces
    }

    /// The text after the last conversion, printed verbatim.
    pub fn trailing(&self) -> &[u8] {
        &self.trailing
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
    let simple = [&b"rx"[..], b"rh", b"gr", b"s", b"r", b"c"];
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
        // `%gr`: GFP flags by name (`GFP_KERNEL|__GFP_ZERO`), as a string.
        b'g' if bytes.get(i) == Some(&b'r') => i += 1,
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
