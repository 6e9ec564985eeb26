//! Finding and reading the user-space binary a uprobe or USDT probe names,
//! the way bpftrace does: a path as given; otherwise, with `-p PID`, a file
//! the process has mapped; then a program in `$PATH`; then a library the
//! dynamic loader knows (`/etc/ld.so.cache`); then the standard library
//! directories. `libc` finds `libc.so.6`, as does `c`.
//!
//! A binary part may also name several files ([`open_all`]): `*` (or
//! nothing) with `-p PID` is every file the process has mapped, read through
//! `/proc/PID/root` so that a process in another mount namespace (a
//! container) is probed in its own files; a wildcard in the file name
//! (`./bin/app*`) is each matching file. With `-p`, an absolute path that
//! does not exist here is looked for in the process's root too.

use std::rc::Rc;

use ktypes::{KernelInfo, KernelInfoError};
use source::{Diagnostic, Span};
use uelf::Binary;

use crate::diagnostics as diag;

/// The resolved binary: where it is and what it holds.
#[derive(Clone)]
pub struct UserBinary {
    /// Where weft reads the file and the kernel attaches to it.
    pub path: String,
    /// How probe names and listings name it (the path the process sees,
    /// for a file found through `/proc/PID/root`).
    pub shown: String,
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
            if let Ok(debug) = Binary::parse(&bytes)
                && self.binary.add_debug_symbols(&debug)
            {
                return;
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
        if let Some(bytes) = read(name)? {
            return Ok((name.to_string(), bytes));
        }
        // A file of a process in another mount namespace.
        if let (Some(pid), true) = (pid, name.starts_with('/')) {
            let inside = format!("/proc/{pid}/root{name}");
            if let Some(bytes) = read(&inside)? {
                return Ok((inside, bytes));
            }
            return Err(diag::binary_not_found(
                span,
                name,
                &format!("at that path, here or in the root of process {pid}"),
            ));
        }
        return Err(diag::binary_not_found(span, name, "at that path"));
    }
    let mut candidates: Vec<String> = Vec::new();
    if let Some(pid) = pid
        && let Ok(maps) = kernel.read_file(&format!("/proc/{pid}/maps"))
    {
        let maps = String::from_utf8_lossy(&maps);
        candidates.extend(
            uelf::mapped_files(&maps)
                .into_iter()
                .filter(|p| is_library(base_name(p), name)),
        );
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
        if let Some(bytes) = read(path)?
            && Binary::parse(&bytes).is_ok()
        {
            return Ok((path.clone(), bytes));
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
        // Raw code (a flat binary mapped and run by a loader of its own):
        // addresses are file offsets, and only an address can name a place.
        let binary = if Binary::is_elf(&bytes) {
            Binary::parse(&bytes)
                .map_err(|e| diag::binary_unreadable(span, &path, &e.to_string()))?
        } else {
            Binary::flat(bytes.len() as u64)
        };
        Ok(UserBinary {
            shown: shown_path(&path, pid),
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
            shown: plain.shown.clone(),
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

/// How a file read at `path` is named: without the `/proc/PID/root` that
/// reaches into process `pid`'s mount namespace.
fn shown_path(path: &str, pid: Option<u32>) -> String {
    pid.and_then(|pid| path.strip_prefix(&format!("/proc/{pid}/root")))
        .filter(|rest| rest.starts_with('/'))
        .unwrap_or(path)
        .to_string()
}

/// Every file a binary part names: `*` or nothing with `-p PID` (the
/// files the process has mapped), a wildcard in the file name (the files
/// that match), or one binary as [`open`] finds it. Files that are not ELF
/// are left out of the first two; none at all is an error.
pub fn open_all(
    name: &str,
    pid: Option<u32>,
    kernel: &dyn KernelInfo,
    span: Span,
) -> Result<Vec<Rc<UserBinary>>, Diagnostic> {
    if name.is_empty() || name == "*" {
        let Some(pid) = pid else {
            return Err(diag::binaries_need_pid(span, name));
        };
        let maps = kernel
            .read_file(&format!("/proc/{pid}/maps"))
            .map_err(|e| {
                diag::binary_unreadable(span, &format!("/proc/{pid}/maps"), &e.to_string())
            })?;
        let files: Vec<String> = uelf::mapped_files(&String::from_utf8_lossy(&maps))
            .into_iter()
            .filter(|f| f.starts_with('/'))
            .map(|f| format!("/proc/{pid}/root{f}"))
            .collect();
        return parse_each(files, name, pid.into(), kernel, span);
    }
    if !name.contains(['*', '?']) {
        return open(name, pid, kernel, span).map(|b| vec![b]);
    }
    let (dir, pattern) = match name.rsplit_once('/') {
        Some(("", pattern)) => ("/", pattern),
        Some((dir, pattern)) => (dir, pattern),
        None => (".", name),
    };
    if dir.contains(['*', '?']) {
        return Err(diag::binary_not_found(
            span,
            name,
            "for it, but weft matches a wildcard in the file name only, not in a directory",
        ));
    }
    let names = kernel.list_dir(dir).unwrap_or_default();
    let files: Vec<String> = names
        .iter()
        .filter(|n| super::glob_match(pattern, n))
        .map(|n| match (name.contains('/'), dir) {
            (false, _) => n.clone(),
            (true, "/") => format!("/{n}"),
            (true, dir) => format!("{dir}/{n}"),
        })
        .map(|f| if f.contains('/') { f } else { format!("./{f}") })
        .collect();
    parse_each(files, name, pid, kernel, span)
}

/// The ELF files among `files` (each read once), or the error that none is.
fn parse_each(
    files: Vec<String>,
    name: &str,
    pid: Option<u32>,
    kernel: &dyn KernelInfo,
    span: Span,
) -> Result<Vec<Rc<UserBinary>>, Diagnostic> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for path in files {
        if !seen.insert(path.clone()) {
            continue;
        }
        let Ok(bytes) = kernel.read_file(&path) else {
            continue;
        };
        if let Ok(binary) = Binary::parse(&bytes) {
            out.push(Rc::new(UserBinary {
                shown: shown_path(&path, pid),
                path,
                binary,
                bytes,
            }));
        }
    }
    if out.is_empty() {
        return Err(diag::binary_not_found(
            span,
            name,
            "for ELF files matching it: there are none",
        ));
    }
    Ok(out)
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

/// The binaries a `-l 'PROVIDER:BINARY:PATTERN'` names (with `-p PID`,
/// `PROVIDER:PATTERN` is every file the process has mapped), and the
/// pattern; or what to say (after `weft: `) when it names none.
pub fn open_to_list<'p>(
    provider: &str,
    rest: &'p str,
    pid: Option<u32>,
    kernel: &dyn KernelInfo,
) -> Result<(Vec<Rc<UserBinary>>, &'p str), String> {
    let (binary, pattern) = match rest.split_once(':') {
        Some(split) => split,
        None if pid.is_some() => ("*", rest),
        None => {
            return Err(format!(
                "error: name the binary to list: weft -l '{provider}:BINARY:*' (or -p PID for a process's)"
            ));
        }
    };
    let users =
        open_all(binary, pid, kernel, Span::DUMMY).map_err(|d| format!("error: {}", d.message))?;
    Ok((users, pattern))
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
