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
//! live. Inside headers the first definition wins, and every definition
//! counts except in the groups of an `#if` on the target alone
//! ([`TARGET_MACROS`]: `# ifdef __i386__ ... # else` in `asm/unistd.h`
//! picks the x86-64 system call numbers); other header conditions are not
//! followed. Function-like macros and expressions are not read. A header the script
//! includes that no directory holds is an error (E0215), as it is to clang.

use std::collections::{HashMap, HashSet};

use ktypes::KernelInfo;
use source::Diagnostic;
use syntax::ast::Item;

use crate::diagnostics as diag;

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

/// The macros that say which target a header is compiled for, and whether
/// this one is it: the only `#if` conditions followed inside headers.
const TARGET_MACROS: &[(&str, bool)] = &[
    ("__x86_64__", cfg!(target_arch = "x86_64")),
    ("__amd64__", cfg!(target_arch = "x86_64")),
    ("__i386__", cfg!(target_arch = "x86")),
    ("__aarch64__", cfg!(target_arch = "aarch64")),
    ("__arm__", cfg!(target_arch = "arm")),
    ("__powerpc64__", cfg!(target_arch = "powerpc64")),
    ("__s390x__", cfg!(target_arch = "s390x")),
    (
        "__riscv",
        cfg!(any(target_arch = "riscv64", target_arch = "riscv32")),
    ),
    ("__ILP32__", cfg!(target_pointer_width = "32")),
    ("__LP64__", cfg!(target_pointer_width = "64")),
];

/// Whether a header's `#if`/`#elif` condition `expr` (or `#ifdef NAME`)
/// holds, when it names target macros alone; `None` for any other condition.
fn target_condition(expr: &str) -> Option<bool> {
    let target = |name: &str| {
        TARGET_MACROS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    };
    let mut names = expr
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| {
            !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()) && *w != "defined"
        })
        .peekable();
    names.peek()?;
    if !names.all(|n| target(n).is_some()) {
        return None;
    }
    let value = syntax::eval_c_expr(expr, &|n| target(n).map(i64::from), &|n| {
        target(n).unwrap_or(false)
    })?;
    Some(value != 0)
}

/// The `#if` groups of one header, as far as [`target_condition`] decides them.
#[derive(Default)]
struct HeaderGroups {
    /// Per open group: whether its lines are live, and whether a branch was
    /// taken (`None`: undecided, every branch live).
    stack: Vec<(bool, Option<bool>)>,
}

impl HeaderGroups {
    fn live(&self) -> bool {
        self.stack.iter().all(|(live, _)| *live)
    }

    /// Takes a conditional directive; false for any other.
    fn directive(&mut self, directive: &str, rest: &str) -> bool {
        match directive {
            "if" | "ifdef" | "ifndef" => {
                let cond = match directive {
                    "if" => target_condition(rest),
                    "ifdef" => target_condition(&format!("defined {rest}")),
                    _ => target_condition(&format!("!defined {rest}")),
                };
                self.stack.push((cond.unwrap_or(true), cond));
            }
            "elif" | "else" => {
                if let Some((live, taken)) = self.stack.last_mut() {
                    match *taken {
                        None => *live = true,
                        Some(true) => *live = false,
                        Some(false) => {
                            let cond = if directive == "else" {
                                Some(true)
                            } else {
                                target_condition(rest)
                            };
                            *live = cond.unwrap_or(true);
                            // An undecided branch leaves the rest undecided.
                            *taken = cond;
                        }
                    }
                }
            }
            "endif" => {
                self.stack.pop();
            }
            _ => return false,
        }
        true
    }
}

/// `-I DIR` and `--include FILE`, as bpftrace has them: directories
/// searched for headers before the system's, and headers read as if the
/// script began with `#include "FILE"`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Includes {
    pub dirs: Vec<String>,
    pub files: Vec<String>,
}

/// The object-like macros of a script and its headers: name → body.
#[derive(Debug, Default)]
pub struct Macros {
    bodies: HashMap<String, String>,
}

impl Macros {
    /// Reads the script's preprocessor lines and the headers they include,
    /// after the `--include` files.
    pub fn collect(items: &[Item], kernel: &dyn KernelInfo, includes: &Includes) -> Macros {
        let mut macros = Macros::default();
        let mut headers = Headers::new(kernel, &includes.dirs);
        for file in &includes.files {
            headers.read(&format!("\"{file}\""), 0, &mut macros);
        }
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

    /// The integer `name` stands for: its body evaluated as a C constant
    /// expression, following the macros it names (`AF_INET` → `PF_INET` →
    /// `2`, `TASK_KILLABLE` → `(TASK_WAKEKILL | TASK_UNINTERRUPTIBLE)`).
    pub fn value(&self, name: &str) -> Option<i64> {
        self.value_at(name, 0)
    }

    fn value_at(&self, name: &str, depth: usize) -> Option<i64> {
        if depth > 16 {
            return None;
        }
        let body = self.bodies.get(name)?;
        syntax::eval_c_expr(body, &|n| self.value_at(n, depth + 1), &|n| {
            self.bodies.contains_key(n)
        })
    }
}

/// The script's `#include` lines whose header no include directory holds
/// (bpftrace's C compiler stops at them, and so does weft). Only the
/// script's own lines: a header's includes are followed for macros alone.
pub fn missing_headers(
    items: &[Item],
    kernel: &dyn KernelInfo,
    includes: &Includes,
) -> Vec<Diagnostic> {
    let mut headers: Option<Headers> = None;
    let mut out = Vec::new();
    for item in items {
        let Item::Preprocessor(line) = item else {
            continue;
        };
        let Some(("include", rest)) = directive(&line.text) else {
            continue;
        };
        let headers = headers.get_or_insert_with(|| Headers::new(kernel, &includes.dirs));
        let Some(path) = header_path(rest) else {
            continue;
        };
        if headers.find(path).is_none() {
            out.push(diag::header_not_found(line.span, path, &headers.dirs));
        }
    }
    out
}

/// The path of `<path>` or `"path"` (the text after `include`).
fn header_path(spec: &str) -> Option<&str> {
    let spec = spec.trim();
    spec.strip_prefix('<')
        .and_then(|s| s.split_once('>'))
        .or_else(|| spec.strip_prefix('"').and_then(|s| s.split_once('"')))
        .map(|(p, _)| p.trim())
}

/// Kernel constants that are macros (so not in BTF) which bpftrace's tools
/// use, for when no header gives them: the task states of
/// `include/linux/sched.h` (runqlat.bt compares `prev_state` with
/// `TASK_RUNNING`), as every kernel since 4.14 defines them. The kernel's
/// own headers win when they are installed; these values are the
/// fallback on machines without them (as here).
const KERNEL_MACROS: &[(&str, i64)] = &[
    ("TASK_RUNNING", 0x0000),
    ("TASK_INTERRUPTIBLE", 0x0001),
    ("TASK_UNINTERRUPTIBLE", 0x0002),
    ("__TASK_STOPPED", 0x0004),
    ("__TASK_TRACED", 0x0008),
    ("EXIT_DEAD", 0x0010),
    ("EXIT_ZOMBIE", 0x0020),
    ("EXIT_TRACE", 0x0030),
    ("TASK_PARKED", 0x0040),
    ("TASK_DEAD", 0x0080),
    ("TASK_WAKEKILL", 0x0100),
    ("TASK_WAKING", 0x0200),
    ("TASK_NOLOAD", 0x0400),
    ("TASK_NEW", 0x0800),
    ("TASK_KILLABLE", 0x0102),
    ("TASK_STOPPED", 0x0104),
    ("TASK_IDLE", 0x0402),
    ("TASK_NORMAL", 0x0003),
];

/// A kernel constant that is a macro, when no header defined it (see [`KERNEL_MACROS`]).
pub fn kernel_macro(name: &str) -> Option<i64> {
    KERNEL_MACROS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
}

/// Includes followed from one script.
struct Headers<'a> {
    kernel: &'a dyn KernelInfo,
    seen: HashSet<String>,
    dirs: Vec<String>,
}

impl<'a> Headers<'a> {
    fn new(kernel: &'a dyn KernelInfo, first: &[String]) -> Headers<'a> {
        let multiarch = format!("/usr/include/{}-linux-gnu", std::env::consts::ARCH);
        let mut dirs: Vec<String> = first
            .iter()
            .map(|d| d.trim_end_matches('/').to_string())
            .collect();
        dirs.extend(kernel_header_dirs(kernel));
        dirs.extend([
            "/usr/local/include".into(),
            multiarch,
            "/usr/include".into(),
        ]);
        Headers {
            kernel,
            seen: HashSet::new(),
            dirs,
        }
    }

    /// Where `path` is and what it holds: the first include directory that
    /// has it (an absolute path, as `--include /tmp/x.h` gives, as it is).
    fn find(&self, path: &str) -> Option<(String, Vec<u8>)> {
        let candidates: Vec<String> = if path.starts_with('/') {
            vec![path.to_string()]
        } else {
            self.dirs
                .iter()
                .map(|dir| format!("{dir}/{path}"))
                .collect()
        };
        candidates
            .into_iter()
            .find_map(|full| self.kernel.read_file(&full).ok().map(|b| (full, b)))
    }

    /// Follows `#include <path>` or `#include "path"` (the text after `include`).
    fn read(&mut self, spec: &str, depth: usize, macros: &mut Macros) {
        let Some(path) = header_path(spec) else {
            return;
        };
        if depth > MAX_DEPTH || self.seen.len() >= MAX_HEADERS || path.contains("..") {
            return;
        }
        let Some((full, bytes)) = self.find(path) else {
            return;
        };
        if self.seen.contains(&full) {
            return;
        }
        self.seen.insert(full);
        let text = String::from_utf8_lossy(&bytes);
        let mut groups = HeaderGroups::default();
        for line in text.lines() {
            let Some((directive, rest)) = directive(line) else {
                continue;
            };
            if groups.directive(directive, rest) || !groups.live() {
                continue;
            }
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

/// The running kernel's own headers, when installed (`linux-headers-*`, or
/// a build tree under `/lib/modules/RELEASE`): searched before the C
/// library's, as bpftrace searches them, so `<linux/sched.h>` is the
/// kernel's (with `TASK_RUNNING`) rather than the user-space API header.
fn kernel_header_dirs(kernel: &dyn KernelInfo) -> Vec<String> {
    let Ok(release) = kernel.read_file("/proc/sys/kernel/osrelease") else {
        return Vec::new();
    };
    let release = String::from_utf8_lossy(&release).trim().to_string();
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x86",
        "aarch64" => "arm64",
        other => other,
    };
    let Some(root) = [
        format!("/lib/modules/{release}/build"),
        format!("/lib/modules/{release}/source"),
        format!("/usr/src/linux-headers-{release}"),
    ]
    .into_iter()
    .find(|root| kernel.read_file(&format!("{root}/Makefile")).is_ok()) else {
        return Vec::new();
    };
    [
        format!("arch/{arch}/include"),
        format!("arch/{arch}/include/generated"),
        "include".to_string(),
        format!("arch/{arch}/include/uapi"),
        format!("arch/{arch}/include/generated/uapi"),
        "include/uapi".to_string(),
        "include/generated/uapi".to_string(),
    ]
    .into_iter()
    .map(|dir| format!("{root}/{dir}"))
    .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_c_constant_expressions() {
        let mut m = Macros::default();
        for (name, body) in [
            ("AF_INET", "PF_INET"),
            ("PF_INET", "2"),
            ("HEX", "0x10"),
            ("OCT", "010"),
            ("SUFFIX", "(4U)"),
            ("NEG", "(-(1))"),
            ("SHIFT", "1 << 3"),
            ("TASK_WAKEKILL", "0x00000100"),
            ("TASK_UNINTERRUPTIBLE", "0x00000002"),
            ("TASK_KILLABLE", "(TASK_WAKEKILL | TASK_UNINTERRUPTIBLE)"),
            ("CAST", "((int)1)"),
            ("LOOP", "LOOP"),
            ("UNKNOWN", "NOT_A_MACRO + 1"),
        ] {
            m.bodies.insert(name.into(), body.into());
        }
        let v = |n| m.value(n);
        assert_eq!(v("AF_INET"), Some(2));
        assert_eq!(v("HEX"), Some(16));
        assert_eq!(v("OCT"), Some(8));
        assert_eq!(v("SUFFIX"), Some(4));
        assert_eq!(v("NEG"), Some(-1));
        assert_eq!(v("SHIFT"), Some(8));
        assert_eq!(v("TASK_KILLABLE"), Some(0x102));
        assert_eq!(v("CAST"), None);
        assert_eq!(v("LOOP"), None);
        assert_eq!(v("UNKNOWN"), None);
        assert_eq!(v("ABSENT"), None);
    }

    #[test]
    fn task_states_without_kernel_headers() {
        assert_eq!(kernel_macro("TASK_RUNNING"), Some(0));
        assert_eq!(kernel_macro("TASK_UNINTERRUPTIBLE"), Some(2));
        assert_eq!(kernel_macro("TASK_KILLABLE"), Some(0x102));
        assert_eq!(
            kernel_macro("TASK_TRACED"),
            None,
            "its value changed in 5.19"
        );
    }

    #[test]
    fn header_groups_on_the_target_pick_its_definitions() {
        // As asm/unistd.h picks unistd_64.h; other conditions keep both ways.
        let header = "#ifndef GUARD\n#define GUARD\n# ifdef __i386__\n#define NR 162\n\
            # elif defined(__ILP32__)\n#define NR 0x40000023\n# else\n#define NR 35\n# endif\n\
            #if defined __USE_MISC\n#define MISC 1\n#else\n#define PLAIN 2\n#endif\n\
            #if !defined(__LP64__) || defined __i386__\n#define W 32\n#elif SOMETHING\n#define W 64\n\
            #else\n#define W 0\n#endif\n#endif\n";
        let kernel = ktypes::FixtureKernel::typical()
            .with_file("/usr/include/weft_test.h", header.as_bytes().to_vec());
        let mut map = source::SourceMap::new();
        let id = map.add("t.bt", "#include <weft_test.h>\nBEGIN { }");
        let (program, _) = syntax::parse(map.file(id));
        let m = Macros::collect(&program.items, &kernel, &Includes::default());
        if cfg!(target_arch = "x86_64") {
            assert_eq!(m.value("NR"), Some(35));
            // The #elif is undecided, so it and the #else both count; the first wins.
            assert_eq!(m.value("W"), Some(64));
        }
        assert_eq!(m.value("MISC"), Some(1));
        assert_eq!(m.value("PLAIN"), Some(2));
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
