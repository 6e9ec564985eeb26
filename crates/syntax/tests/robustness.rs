//! The parser never panics and always terminates, whatever the input.

mod common;

use std::time::{Duration, Instant};

fn parse_quickly(src: &str) {
    let start = Instant::now();
    let (program, _) = syntax::parse_text(src, 0);
    let _ = syntax::print_ast(&program);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "parse took {:?} on {src:?}",
        start.elapsed()
    );
}

#[test]
fn every_prefix_of_every_ok_case() {
    for (_, src) in common::OK_CASES {
        for (i, _) in src.char_indices() {
            parse_quickly(&src[..i]);
            parse_quickly(&src[i..]);
        }
    }
}

/// Tiny deterministic PRNG, to avoid a dependency.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const ALPHABET: &[u8] = b"(){}[]/;:,.$@#\"'\\*&!~-+=<>?|^%_ \n\taz09xe";

#[test]
fn random_mutations() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for (_, src) in common::OK_CASES {
        for _ in 0..40 {
            let mut bytes = src.as_bytes().to_vec();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(bytes.len() + 1);
                match rng.below(3) {
                    0 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    1 if at < bytes.len() => bytes[at] = ALPHABET[rng.below(ALPHABET.len())],
                    _ => bytes.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
                }
            }
            let text = String::from_utf8_lossy(&bytes);
            parse_quickly(&text);
        }
    }
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_stack_overflow() {
    let cases = [
        format!("BEGIN {{ $x = {}1; }}", "(".repeat(10_000)),
        format!(
            "BEGIN {{ $x = {}1{}; }}",
            "(".repeat(10_000),
            ")".repeat(10_000)
        ),
        format!("BEGIN {{ $x = {}1; }}", "-".repeat(10_000)),
        format!("BEGIN {{ $x = {}1; }}", "!~*&".repeat(3_000)),
        format!("BEGIN {}", "{".repeat(10_000)),
        format!("BEGIN {{ {} }}", "if (1) {".repeat(5_000)),
        format!("BEGIN {{ $x = {}; }}", "@m[".repeat(10_000)),
        format!("BEGIN {{ $x = {}; }}", "f(".repeat(10_000)),
        format!("BEGIN {{ $x = 1{}; }}", " ? 1 : 1".repeat(10_000)),
        format!("BEGIN {{ $x = {}1; }}", "(uint8)".repeat(10_000)),
    ];
    for src in &cases {
        let (_, diags) = syntax::parse_text(src, 0);
        assert!(diags.has_errors());
        let nesting = diags.iter().any(|d| d.code == Some(source::Code::E0027));
        assert!(nesting, "no nesting diagnostic for {}", &src[..40]);
        assert!(diags.len() < 20, "too many diagnostics: {}", diags.len());
    }
    // Moderate nesting is fine.
    let ok = format!("BEGIN {{ $x = {}1{}; }}", "(".repeat(50), ")".repeat(50));
    let (_, diags) = syntax::parse_text(&ok, 0);
    assert!(diags.is_empty());
}

#[test]
fn garbage_inputs() {
    for src in [
        "",
        " ",
        "\n",
        "#",
        "#!",
        "{",
        "}",
        "/",
        "//",
        "/*",
        "\"",
        "'",
        "@",
        "$",
        "$#",
        "$0",
        "kprobe",
        "kprobe:",
        "kprobe:f /",
        "kprobe:f {",
        "BEGIN { $x = (",
        "struct",
        "struct X {",
        "config",
        "config =",
        "config = {",
        "macro",
        "macro m(",
        "fn",
        "fn f(",
        "let",
        "let @m",
        "let @m =",
        "import",
        "BEGIN { for (",
        "BEGIN { if",
        "\u{0}\u{1}\u{ff}",
        "é ü 日本",
        "BEGIN { \"é\\é\" }",
        "BEGIN { 'é' }",
        "BEGIN { $x = 1e99999999999; }",
    ] {
        parse_quickly(src);
    }
}
