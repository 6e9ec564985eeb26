//! `uprobe:BINARY:FUNCTION` (alias `u`) and `uretprobe:BINARY:FUNCTION`
//! (alias `ur`): a breakpoint at a function's entry, or at its return.
//!
//! - `BINARY` is a path or a short name (`libc`); see [`super::userbin`].
//! - `FUNCTION` is a symbol, a symbol plus an offset (`main+4`, uprobe
//!   only), a wildcard over symbols (`read*`) or an address (`0x401136`).
//! - The kernel attaches at a file offset: the symbol's address translated
//!   through the `PT_LOAD` program headers, which is what PIE executables
//!   and shared libraries need.
//!
//! - Symbols come from the binary and, for wildcards and names it lacks,
//!   from its separate debug file (`/usr/lib/debug`, `.gnu_debuglink`).
//! - An indirect function (glibc's `strlen`, `memcpy`, ...) is probed where
//!   its calls land: the implementation its resolver picked on this machine
//!   (bpftrace probes the resolver itself, which runs once at load time).
//! - `FUNCTION+OFFSET` and an address must be where an instruction begins
//!   (and a uretprobe's address where a function does); see
//!   [`super::placement`].
//!
//! The context is the thread's `struct pt_regs`: `arg0`..`argN` (uprobe),
//! `retval` (uretprobe) and `func` read it.

use ktypes::KernelInfo;
use source::Diagnostic;

use super::placement::{self, Function};
use super::userbin::{self, UserBinary};
use super::{AttachPointRef, Context, ListQuery, Needs, ProviderDef, ResolvedProbe, glob_match};
use crate::diagnostics as diag;

pub const UPROBE: ProviderDef = ProviderDef {
    name: "uprobe",
    aliases: &["u"],
    usage: "uprobe:BINARY:FUNCTION[+OFFSET] or uprobe:BINARY:0xADDRESS",
    help: "a user-space function's entry (or an instruction in it)",
    resolve: |ap, kernel, pid| resolve(ap, kernel, pid, false),
    list: Some(list),
    listed_by: super::Listed::User,
    pid_filter: true,
    needs: Needs::Bpf,
};

pub const URETPROBE: ProviderDef = ProviderDef {
    name: "uretprobe",
    aliases: &["ur"],
    usage: "uretprobe:BINARY:FUNCTION or uretprobe:BINARY:0xADDRESS",
    help: "a user-space function's return",
    resolve: |ap, kernel, pid| resolve(ap, kernel, pid, true),
    list: Some(list),
    listed_by: super::Listed::Named,
    pid_filter: true,
    needs: Needs::Bpf,
};

/// `-l 'uprobe:BINARY:PATTERN'`: the function symbols of each binary the
/// pattern names (and of its separate debug file), sorted, as bpftrace
/// prints them; with `-p PID`, of every file the process has mapped.
fn list(q: &ListQuery<'_>, kernel: &dyn KernelInfo) -> Result<Vec<String>, String> {
    let provider = q.provider.name;
    let (users, pattern) = userbin::open_to_list(provider, q.pattern, q.pid, kernel)?;
    let mut probes: Vec<String> = Vec::new();
    for user in users {
        let mut user = std::rc::Rc::unwrap_or_clone(user);
        user.load_debug_symbols(kernel);
        let shown = &user.shown;
        probes.extend(
            user.binary
                .functions
                .iter()
                .filter(|f| glob_match(pattern, &f.name))
                .map(|f| format!("{provider}:{shown}:{}", f.name)),
        );
    }
    probes.sort();
    probes.dedup();
    Ok(probes)
}

/// Resolves a uprobe (`retprobe == false`) or uretprobe attach point.
pub fn resolve(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    pid: Option<u32>,
    retprobe: bool,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    let usage = if retprobe {
        "uretprobe:BINARY:FUNCTION or uretprobe:BINARY:0xADDRESS".to_string()
    } else {
        "uprobe:BINARY:FUNCTION, uprobe:BINARY:FUNCTION+OFFSET or uprobe:BINARY:0xADDRESS"
            .to_string()
    };
    let [binary, target] = ap.parts else {
        return Err(diag::bad_attach_point(ap.span, ap.raw, &usage));
    };
    if target.is_empty() {
        return Err(diag::bad_attach_point(ap.span, ap.raw, &usage));
    }
    // `*` with -p (every file the process has mapped), or a wildcard in
    // the file name: each file that has the function.
    let several = binary.is_empty() || binary.contains(['*', '?']);
    let users = userbin::open_all(binary, pid, kernel, ap.span)?;
    if !several {
        let user = users.into_iter().next().expect("open_all gives one binary or an error");
        return resolve_in(ap, user, kernel, pid, retprobe, &usage, false);
    }
    let mut probes = Vec::new();
    let mut first_error = None;
    for user in users {
        match resolve_in(ap, user, kernel, pid, retprobe, &usage, true) {
            Ok(found) => probes.extend(found),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (probes.is_empty(), first_error) {
        (false, _) => Ok(probes),
        (true, Some(e)) if !target.contains(['*', '?']) && binary.is_empty() => Err(e),
        (true, _) => Err(diag::no_probe_matches(ap.span, ap.raw)),
    }
}

/// Resolves the function part of a uprobe in one binary; `several`: one of
/// the files a wildcard or `-p` named (a function the kernel refuses there
/// is left out, as for a wildcard's).
#[allow(clippy::result_large_err, reason = "providers report a Diagnostic")]
fn resolve_in(
    ap: &AttachPointRef<'_>,
    mut user: std::rc::Rc<UserBinary>,
    kernel: &dyn KernelInfo,
    pid: Option<u32>,
    retprobe: bool,
    usage: &str,
    several: bool,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    let kind = if retprobe { "uretprobe" } else { "uprobe" };
    let target = &ap.parts[1];
    let from_wildcard = several || target.contains(['*', '?']);
    // A separate debug file is read only when the binary's own symbols
    // cannot answer: wildcards (bpftrace matches debug symbols too) and
    // names it lacks.
    // They also tell how long an indirect function's implementation is, and
    // which function holds an address, for the placement checks.
    let named = target.split_once('+').map_or(target.as_str(), |(n, _)| n);
    let numeric = target.starts_with(|c: char| c.is_ascii_digit());
    let needs_debug_symbols = if numeric {
        parse_number(target)
            .is_some_and(|a| placement::function_holding(&user.binary, a).is_none())
    } else {
        from_wildcard
            || match user.binary.function(named) {
                None => true,
                Some(sym) => sym.ifunc && named != target.as_str(),
            }
    };
    if needs_debug_symbols && several {
        let mut with_debug = std::rc::Rc::unwrap_or_clone(user);
        with_debug.load_debug_symbols(kernel);
        user = std::rc::Rc::new(with_debug);
    } else if needs_debug_symbols {
        user = userbin::open_with_debug_symbols(&ap.parts[0], pid, kernel, ap.span)?;
    }
    let UserBinary {
        path,
        shown,
        binary,
        bytes,
    } = &*user;
    let probe = |func: &str, label: &str, address: u64| -> Result<ResolvedProbe, Diagnostic> {
        let offset = binary
            .file_offset(address)
            .ok_or_else(|| diag::address_not_mapped(ap.span, path, address))?;
        Ok(ResolvedProbe {
            provider: if retprobe { URETPROBE.name } else { UPROBE.name },
            attach: abi::Attach::Uprobe {
                path: path.clone(),
                offset,
                retprobe,
                pid,
                ref_ctr_offset: 0,
                from_wildcard,
            },
            section: kind.to_string(),
            name: format!("{kind}:{shown}:{label}"),
            context: Context::Uprobe {
                retprobe,
                func: func.to_string(),
            },
            short: func.to_string(),
        })
    };

    if target.starts_with(|c: char| c.is_ascii_digit()) {
        let address =
            parse_number(target).ok_or_else(|| diag::bad_attach_point(ap.span, ap.raw, &usage))?;
        if binary.file_offset(address).is_none() {
            return Err(diag::address_not_mapped(ap.span, path, address));
        }
        let holder = placement::function_holding(binary, address);
        match holder {
            Some(sym) if retprobe && address != sym.address => {
                let place = format!("{}+{}", sym.name, address - sym.address);
                return Err(diag::uretprobe_inside_function(
                    ap.span, address, &place, &sym.name, path,
                ));
            }
            Some(sym) => {
                let func = Function {
                    name: &sym.name,
                    entry: sym.address,
                    size: Some(sym.size).filter(|&size| size > 0),
                    by_address: true,
                };
                let offset = address - sym.address;
                placement::check(ap.span, binary, bytes, &func, offset, ap.unchecked)?;
            }
            None if ap.unchecked => {}
            None => return Err(diag::uprobe_address_in_no_function(ap.span, path, address)),
        }
        let func = holder.map_or_else(|| format!("{address:#x}"), |s| s.name.clone());
        return probe(&func, target, address).map(|p| vec![p]);
    }
    // Where calls to a function land: an indirect function's implementation.
    let entry = |sym: &uelf::Symbol| -> Result<u64, String> {
        if !sym.ifunc {
            return Ok(sym.address);
        }
        kernel
            .ifunc_target(path, &sym.name)
            .map_err(|e| e.to_string())
    };
    if from_wildcard {
        // An indirect function that cannot be resolved is left out: its
        // resolver alone would fire only when the library is loaded.
        let matched: Vec<ResolvedProbe> = binary
            .functions
            .iter()
            .filter(|s| glob_match(target, &s.name))
            .filter_map(|s| entry(s).ok().map(|at| (s, at)))
            .map(|(s, at)| probe(&s.name, &s.name, at))
            .collect::<Result<_, _>>()?;
        if matched.is_empty() {
            return Err(diag::no_probe_matches(ap.span, ap.raw));
        }
        return Ok(matched);
    }
    let (name, extra) = match target.split_once('+') {
        Some((name, off)) => {
            let off =
                parse_number(off).ok_or_else(|| diag::bad_attach_point(ap.span, ap.raw, &usage))?;
            if retprobe {
                return Err(diag::bad_attach_point(ap.span, ap.raw, &usage));
            }
            (name, off)
        }
        None => (target.as_str(), 0),
    };
    let Some(sym) = binary.function(name) else {
        let known: Vec<&str> = binary.functions.iter().map(|s| s.name.as_str()).collect();
        return Err(diag::symbol_not_found(ap.span, kind, path, name, &known));
    };
    let at = entry(sym).map_err(|why| diag::ifunc_unresolved(ap.span, path, name, &why))?;
    if sym.size == 0 && !sym.ifunc && !ap.unchecked {
        return Err(diag::uprobe_symbol_without_size(ap.span, name));
    }
    if extra != 0 {
        let size = if sym.ifunc {
            placement::size_of_function_at(binary, at)
        } else {
            Some(sym.size).filter(|&size| size > 0)
        };
        let func = Function {
            name,
            entry: at,
            size,
            by_address: false,
        };
        placement::check(ap.span, binary, bytes, &func, extra, ap.unchecked)?;
    }
    probe(name, target, at + extra).map(|p| vec![p])
}

/// A decimal or `0x` hexadecimal number.
pub(crate) fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}
