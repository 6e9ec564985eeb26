//! bpftrace's printf rendered per event, from the format `abi::printf`
//! parsed once at compile time.
//!
//! Each piece (text up to and including one conversion) is interpreted as
//! glibc's `snprintf` would and cut at its first NUL, as bpftrace does; the
//! quirks kept: `%c` of 0 prints nothing; `%d` takes the low 32 bits and
//! `%hhd` the low 8; `%p` of 0 prints `(nil)`.

pub use abi::printf::{ArgKind, Conversion, Format, FormatError, validate};
use abi::printf::{BufferMode, Directive, Length, Piece};

use crate::value::Value;

/// Rendering a parsed [`Format`] with an event's arguments.
pub trait Render {
    /// Renders with `args` (one per conversion; missing ones print as 0 or empty).
    fn render(&self, args: &[Value]) -> Vec<u8>;
    /// [`Render::render`], appending to `out` (so a caller can reuse one buffer).
    fn render_into(&self, args: &[Value], out: &mut Vec<u8>);
}

impl Render for Format {
    fn render(&self, args: &[Value]) -> Vec<u8> {
        let mut out = Vec::new();
        self.render_into(args, &mut out);
        out
    }

    fn render_into(&self, args: &[Value], out: &mut Vec<u8>) {
        for (index, piece) in self.pieces().iter().enumerate() {
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
        out.extend_from_slice(self.trailing());
    }
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
        b'g' => {
            let text = gfp_flags(arg.as_bits());
            pad(out, d, &[], text.as_bytes(), false);
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

/// `%gr`: GFP flags as the kernel's `%pGg` names them (`mmflags.h`, whose
/// order matters: compound masks first, then single flags), bits no name
/// covers in hex at the end, `0` for none.
fn gfp_flags(flags: u64) -> String {
    const DMA: u64 = 1 << 0;
    const HIGHMEM: u64 = 1 << 1;
    const DMA32: u64 = 1 << 2;
    const MOVABLE: u64 = 1 << 3;
    const HIGH: u64 = 1 << 5;
    const IO: u64 = 1 << 6;
    const FS: u64 = 1 << 7;
    const ZERO: u64 = 1 << 8;
    const DIRECT_RECLAIM: u64 = 1 << 10;
    const KSWAPD_RECLAIM: u64 = 1 << 11;
    const WRITE: u64 = 1 << 12;
    const NOWARN: u64 = 1 << 13;
    const RETRY_MAYFAIL: u64 = 1 << 14;
    const NOFAIL: u64 = 1 << 15;
    const NORETRY: u64 = 1 << 16;
    const MEMALLOC: u64 = 1 << 17;
    const COMP: u64 = 1 << 18;
    const NOMEMALLOC: u64 = 1 << 19;
    const HARDWALL: u64 = 1 << 20;
    const THISNODE: u64 = 1 << 21;
    const ACCOUNT: u64 = 1 << 22;
    const ZEROTAGS: u64 = 1 << 23;
    const SKIP_ZERO: u64 = 1 << 24;
    const SKIP_KASAN: u64 = 1 << 25;
    const NO_OBJ_EXT: u64 = 1 << 26;
    const RECLAIM: u64 = DIRECT_RECLAIM | KSWAPD_RECLAIM;
    const KERNEL: u64 = RECLAIM | IO | FS;
    const NOIO: u64 = RECLAIM;
    const NOFS: u64 = NOIO | IO;
    const USER: u64 = NOFS | FS | HARDWALL;
    const HIGHUSER: u64 = USER | HIGHMEM;
    const HIGHUSER_MOVABLE: u64 = HIGHUSER | MOVABLE | SKIP_KASAN;
    const TRANSHUGE_LIGHT: u64 = (HIGHUSER_MOVABLE | COMP | NOMEMALLOC | NOWARN) & !RECLAIM;
    const NAMES: [(u64, &str); 35] = [
        (TRANSHUGE_LIGHT | DIRECT_RECLAIM, "GFP_TRANSHUGE"),
        (TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT"),
        (HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
        (HIGHUSER, "GFP_HIGHUSER"),
        (USER, "GFP_USER"),
        (KERNEL | ACCOUNT, "GFP_KERNEL_ACCOUNT"),
        (KERNEL, "GFP_KERNEL"),
        (NOFS, "GFP_NOFS"),
        (HIGH | KSWAPD_RECLAIM, "GFP_ATOMIC"),
        (NOIO, "GFP_NOIO"),
        (KSWAPD_RECLAIM | NOWARN, "GFP_NOWAIT"),
        (DMA, "GFP_DMA"),
        (HIGHMEM, "__GFP_HIGHMEM"),
        (DMA32, "GFP_DMA32"),
        (HIGH, "__GFP_HIGH"),
        (IO, "__GFP_IO"),
        (FS, "__GFP_FS"),
        (ZERO, "__GFP_ZERO"),
        (DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM"),
        (KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM"),
        (WRITE, "__GFP_WRITE"),
        (NOWARN, "__GFP_NOWARN"),
        (RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL"),
        (NOFAIL, "__GFP_NOFAIL"),
        (NORETRY, "__GFP_NORETRY"),
        (MEMALLOC, "__GFP_MEMALLOC"),
        (COMP, "__GFP_COMP"),
        (NOMEMALLOC, "__GFP_NOMEMALLOC"),
        (HARDWALL, "__GFP_HARDWALL"),
        (THISNODE, "__GFP_THISNODE"),
        (ACCOUNT, "__GFP_ACCOUNT"),
        (ZEROTAGS, "__GFP_ZEROTAGS"),
        (SKIP_ZERO, "__GFP_SKIP_ZERO"),
        (SKIP_KASAN, "__GFP_SKIP_KASAN"),
        (NO_OBJ_EXT, "__GFP_NO_OBJ_EXT"),
    ];
    if flags == 0 {
        return "0".to_string();
    }
    let mut names = Vec::new();
    let mut left = flags;
    for (mask, name) in NAMES {
        if left & mask == mask {
            names.push(name.to_string());
            left &= !mask;
        }
    }
    if left != 0 {
        names.push(format!("0x{left:x}"));
    }
    names.join("|")
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
