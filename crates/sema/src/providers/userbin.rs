//! Finding and reading the user-space binary a uprobe or USDT probe names,
//! the way bpftrace does: a path as given; otherwise, with `-p PID`, a file
//! the process has mapped; then a program in `$PATH`; then a library the
//! dynamic loader knows (`/etc/ld.so.cache`); then the standard library
//! directories. `libc` finds `libc.so.6`, as does `c`.

use std::rc::Rc;

use ktypes::{KernelInfo, KernelInfoError};
use source::{Diagnostic, Span};
use uelf::Binary;

use crate::diagnostics as diag;

/// The resolved binary: where it is and what it holds.
#[derive(Clone)]
pub struct UserBinary {
    pub path: String,
    pub binary: Binary,
    /// The file itself, for what the parsed facts leave out (instructions).
    pub bytes: Vec<u8>,
}

impl UserBinary {
    /// Adds the symbols of the binary's separate debug file when one is
    /// installed (a `-dbg` or `-dbgsym` package, or a debug link beside
    /// it): local functions that stripping removed. Without one, nothing
    /// changes.
    pub fn load_debug_symbols(&mut self, kernel: &dyn KernelInfo) {
        for path in self.binary.debug_file_paths(&self.path) {
            let Ok(bytes) = kernel.read_file(&path) else {
                continue;
            };
            if let Ok(debug) = Binary::parse(&bytes) {
                if self.binary.add_debug_symbols(&debug) {
                    return;
                }
            }
        }
    }
}

/// The standard library directories, searched last.
const LIBRARY_DIRS: &[&str] = &[
    "/lib64",
    "/usr/lib64",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib",
    "/usr/lib",
];

/// Whether a file name is the library `name` (`libc.so.6` is `libc` and `c`).
fn is_library(file: &str, name: &str) -> bool {
    file == name
        || file.starts_with(&format!("{name}.so"))
        || file.starts_with(&format!("lib{name}.so"))
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The path a probe's binary name resolves to, or the diagnostic saying where it looked.
pub fn find(
    name: &str,
    pid: Option<u32>,
    kernel: &dyn KernelInfo,
    span: Span,
) -> Result<(String, Vec<u8>), Diagnostic> {
    let read = |path: &str| match kernel.read_file(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(KernelInfoError::NotFound(_)) => Ok(None),
        Err(e) => Err(diag::binary_unreadable(span, path, &e.to_string())),
    };
    if name.contains('/') {
        return match read(name)? {
            Some(bytes) => Ok((name.to_string(), bytes)),
            None => Err(diag::binary_not_found(span, name, "at that path")),
        };
    }
    let mut candidates: Vec<String> = Vec::new();
    if let Some(pid) = pid {
        if let Ok(maps) = kernel.read_file(&format!("/proc/{pid}/maps")) {
            let maps = String::from_utf8_lossy(&maps);
            candidates.extend(
                uelf::mapped_files(&maps)
                    .into_iter()
                    .filter(|p| is_library(base_name(p), name)),
            );
        }
    }
    candidates.extend(
        kernel
            .executable_search_path()
            .iter()
            .map(|dir| format!("{}/{name}", dir.trim_end_matches('/'))),
    );
    if let Ok(cache) = kernel.read_file("/etc/ld.so.cache") {
        candidates.extend(
            uelf::parse_ld_so_cache(&cache)
                .into_iter()
                .filter(|(soname, _)| is_library(soname, name))
                .map(|(_, path)| path),
        );
    }
    for dir in LIBRARY_DIRS {
        candidates.push(format!("{dir}/lib{name}.so"));
        candidates.push(format!("{dir}/{name}"));
    }
    for path in &candidates {
        if let Some(bytes) = read(path)? {
            if Binary::parse(&bytes).is_ok() {
                return Ok((path.clone(), bytes));
            }
        }
    }
    let looked = match pid {
        Some(pid) => format!(
            "in the files process {pid} has mapped, in $PATH, in /etc/ld.so.cache and in {}",
            LIBRARY_DIRS.join(", ")
        ),
        None => format!(
            "in $PATH, in /etc/ld.so.cache and in {}",
            LIBRARY_DIRS.join(", ")
        ),
    };
    Err(diag::binary_not_found(span, name, &looked))
}

/// Finds and parses the binary a probe names (once per check: the kernel's
/// memo keeps it for the next probe naming it).
pub fn open(
    name: &str,
    pid: Option<u32>,
    kernel: &dyn KernelInfo,
    span: Span,
) -> Result<Rc<UserBinary>, Diagnostic> {
    let parse = || {
        let (path, bytes) = find(name, pid, kernel, span)?;
        let binary = Binary::parse(&bytes)
            .map_err(|e| diag::binary_unreadable(span, &path, &e.to_string()))?;
        Ok(UserBinary {
            path,
            binary,
            bytes,
        })
    };
    match kernel.memo() {
        Some(memo) => memo.get_or_try(&format!("userbin:{pid:?}:{name}"), parse),
        None => parse().map(Rc::new),
    }
}

/// [`open`], with the symbols of the binary's separate debug file added
/// (see [`UserBinary::load_debug_symbols`]); kept apart in the memo.
pub fn open_with_debug_symbols(
    name: &str,
    pid: Option<u32>,
    kernel: &dyn KernelInfo,
    span: Span,
) -> Result<Rc<UserBinary>, Diagnostic> {
    let plain = open(name, pid, kernel, span)?;
    let load = || -> Result<UserBinary, Diagnostic> {
        let mut user = UserBinary {
            path: plain.path.clone(),
            binary: plain.binary.clone(),
            bytes: plain.bytes.clone(),
        };
        user.load_debug_symbols(kernel);
        Ok(user)
    };
    match kernel.memo() {
        Some(memo) => memo.get_or_try(&format!("userbin-debug:{pid:?}:{name}"), load),
        None => load().map(Rc::new),
    }
}

/// When the binary `name` does not define `symbol` but a library it needs
/// (`DT_NEEDED`) does, as the dynamic loader would find it: the binary's
/// path and that library's path.
pub fn defining_dependency(
    name: &str,
    symbol: &str,
    pid: Option<u32>,
    kernel: &dyn KernelInfo,
    span: Span,
) -> Option<(String, String)> {
    let user = open(name, pid, kernel, span).ok()?;
    user.binary.needed.iter().find_map(|soname| {
        let dep = open(soname, pid, kernel, span).ok()?;
        dep.binary
            .function(symbol)
            .map(|_| (user.path.clone(), dep.path.clone()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_names() {
        assert!(is_library("libc.so.6", "libc"));
        assert!(is_library("libc.so.6", "c"));
        assert!(is_library("libpthread.so.0", "pthread"));
        assert!(!is_library("libcrypt.so.1", "libc"));
        assert!(!is_library("libc.so.6", "libcrypt"));
        assert!(is_library("bash", "bash"));
    }
}

/// The binary a `-l 'PROVIDER:BINARY:PATTERN'` names, and the pattern; or
/// what to say (after `weft: `) when it names none.
pub fn open_to_list<'p>(
    provider: &str,
    rest: &'p str,
    kernel: &dyn KernelInfo,
) -> Result<(Rc<UserBinary>, &'p str), String> {
    let Some((binary, pattern)) = rest.split_once(':') else {
        return Err(format!(
            "error: name the binary to list: weft -l '{provider}:BINARY:*'"
        ));
    };
    let user =
        open(binary, None, kernel, Span::DUMMY).map_err(|d| format!("error: {}", d.message))?;
    Ok((user, pattern))
}
