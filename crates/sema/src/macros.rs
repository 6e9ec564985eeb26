//! Integer constants from the script's C preprocessor lines, for the case
//! bpftrace's tools rely on: `AF_INET` after `#include <sys/socket.h>`.
//!
//! bpftrace runs clang's preprocessor; weft has none, so it reads what is
//! enough for constants: `#define NAME VALUE` in the script and in the
//! headers it includes (in `/usr/include`, its multiarch directory and
//! `/usr/local/include`, followed through their own `#include`s), where
//! VALUE is an integer or the name of another such macro (`AF_INET` →
//! `PF_INET` → `2`). The script's `#if` groups were applied by the parser
//! (with [`predefined_macro`]), so every preprocessor line seen here is
//! live. Inside headers every definition counts and the first one wins.
//! Function-like macros and expressions are not read.

use std::collections::{HashMap, HashSet};

use ktypes::KernelInfo;
use syntax::ast::Item;

/// Headers followed at most, and how deep, per script.
const MAX_HEADERS: usize = 400;
const MAX_DEPTH: usize = 12;

/// The macros the preprocessor defines before the script's first line, as
/// bpftrace's clang invocation does: `BPFTRACE_HAVE_BTF` when the kernel has
/// BTF (the tools' `#ifndef BPFTRACE_HAVE_BTF` groups then drop their
/// hand-written structs and kernel headers), and the target's `__linux__`,
/// `__BPF_TRACING__` and architecture name. Pass it to `syntax::parse_with`.
pub fn predefined_macro(kernel: &dyn KernelInfo, name: &str) -> bool {
    match name {
        "BPFTRACE_HAVE_BTF" => kernel.btf().is_ok(),
        "__linux__" | "__BPF_TRACING__" => true,
        "__x86_64__" => cfg!(target_arch = "x86_64"),
        "__aarch64__" => cfg!(target_arch = "aarch64"),
        _ => false,
    }
}

/// The object-like macros of a script and its headers: name → body.
#[derive(Debug, Default)]
pub struct Macros {
    bodies: HashMap<String, String>,
}

impl Macros {
    /// Reads the script's preprocessor lines and the headers they include.
    pub fn collect(items: &[Item], kernel: &dyn KernelInfo) -> Macros {
        let mut macros = Macros::default();
        let mut headers = Headers::new(kernel);
        for item in items {
            let Item::Preprocessor(line) = item else {
                continue;
            };
            match directive(&line.text) {
                Some(("define", rest)) => {
                    if let Some((name, body)) = definition(rest) {
                        macros.bodies.insert(name.to_string(), body.to_string());
                    }
                }
                Some(("undef", rest)) => {
                    macros.bodies.remove(rest.trim());
                }
                Some(("include", rest)) => headers.read(rest, 0, &mut macros),
                _ => {}
            }
        }
        macros
    }

    /// The integer `name` stands for, following macros that name macros.
    pub fn value(&self, name: &str) -> Option<i64> {
        let mut name = name;
        for _ in 0..16 {
            let body = self.bodies.get(name)?;
            if let Some(v) = integer(body) {
                return Some(v);
            }
            name = body
                .trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .trim();
            if !is_identifier(name) {
                return None;
            }
        }
        None
    }
}

/// Includes followed from one script.
struct Headers<'a> {
    kernel: &'a dyn KernelInfo,
    seen: HashSet<String>,
    dirs: Vec<String>,
}

impl<'a> Headers<'a> {
    fn new(kernel: &'a dyn KernelInfo) -> Headers<'a> {
        let multiarch = format!("/usr/include/{}-linux-gnu", std::env::consts::ARCH);
        Headers {
            kernel,
            seen: HashSet::new(),
            dirs: vec![
                "/usr/local/include".into(),
                multiarch,
                "/usr/include".into(),
            ],
        }
    }

    /// Follows `#include <path>` or `#include "path"` (the text after `include`).
    fn read(&mut self, spec: &str, depth: usize, macros: &mut Macros) {
        let spec = spec.trim();
        let Some(path) = spec
            .strip_prefix('<')
            .and_then(|s| s.split_once('>'))
            .or_else(|| spec.strip_prefix('"').and_then(|s| s.split_once('"')))
            .map(|(p, _)| p.trim())
        else {
            return;
        };
        if depth > MAX_DEPTH || self.seen.len() >= MAX_HEADERS || path.contains("..") {
            return;
        }
        let Some((full, bytes)) = self
            .dirs
            .iter()
            .map(|dir| format!("{dir}/{path}"))
            .filter(|full| !self.seen.contains(full))
            .find_map(|full| self.kernel.read_file(&full).ok().map(|b| (full, b)))
        else {
            return;
        };
        self.seen.insert(full);
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines() {
            let Some((directive, rest)) = directive(line) else {
                continue;
            };
            match directive {
                "define" => {
                    if let Some((name, body)) = definition(rest) {
                        macros
                            .bodies
                            .entry(name.to_string())
                            .or_insert_with(|| body.to_string());
                    }
                }
                "include" => self.read(rest, depth + 1, macros),
                _ => {}
            }
        }
    }
}

/// `# define X 1` → `("define", "X 1")`.
fn directive(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    Some((&rest[..end], rest[end..].trim()))
}

/// `NAME BODY` of an object-like macro (not `NAME(args) ...`), comments cut.
fn definition(rest: &str) -> Option<(&str, &str)> {
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..end];
    if name.is_empty() || rest[end..].starts_with('(') || rest.ends_with('\\') {
        return None;
    }
    let body = rest[end..].trim();
    let body = body.split("/*").next().unwrap_or("");
    let body = body.split("//").next().unwrap_or("").trim();
    Some((name, body))
}

fn is_identifier(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An integer literal as C writes it: decimal, `0x` hex or `0` octal, with
/// `U`/`L` suffixes, in parentheses, possibly negative.
fn integer(body: &str) -> Option<i64> {
    let mut s = body.trim();
    while let Some(inner) = s.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
        s = inner.trim();
    }
    let (negative, s) = match s.strip_prefix('-') {
        Some(rest) => (true, rest.trim()),
        None => (false, s),
    };
    let s = s.trim_end_matches(['u', 'U', 'l', 'L']);
    let v = if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()? as i64
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()? as i64
    } else {
        s.parse::<u64>().ok()? as i64
    };
    Some(if negative { v.wrapping_neg() } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_as_c_writes_them() {
        assert_eq!(integer("2"), Some(2));
        assert_eq!(integer("0x10"), Some(16));
        assert_eq!(integer("010"), Some(8));
        assert_eq!(integer("(4U)"), Some(4));
        assert_eq!(integer("-1"), Some(-1));
        assert_eq!(integer("(-(1))"), None);
        assert_eq!(integer("1 << 3"), None);
        assert_eq!(integer("PF_INET"), None);
    }

    #[test]
    fn definitions() {
        assert_eq!(definition("AF_INET PF_INET"), Some(("AF_INET", "PF_INET")));
        assert_eq!(definition("X 3 /* three */"), Some(("X", "3")));
        assert_eq!(definition("F(x) ((x) + 1)"), None);
        assert_eq!(directive("  #  define X 1"), Some(("define", "X 1")));
        assert_eq!(directive("int x;"), None);
    }
}
