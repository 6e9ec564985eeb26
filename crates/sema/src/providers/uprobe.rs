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
    // With -v, each function's parameters from DWARF (when the binary has it).
    let mut params: std::collections::HashMap<String, Vec<String>> = Default::default();
    for user in users {
        let mut user = std::rc::Rc::unwrap_or_clone(user);
        user.load_debug_symbols(kernel);
        let shown = &user.shown;
        let dwarf = if q.verbose {
            super::debuginfo::debug_info(&user.path, kernel).ok()
        } else {
            None
        };
        for f in user.binary.functions.iter().filter(|f| glob_match(pattern, &f.name)) {
            let name = format!("{provider}:{shown}:{}", f.name);
            if let Some(d) = dwarf.as_ref().and_then(|d| d.functions.get(&f.name)) {
                params.insert(name.clone(), super::debuginfo::param_lines(d));
            }
            probes.push(name);
        }
    }
    probes.sort();
    probes.dedup();
    if params.is_empty() {
        return Ok(probes);
    }
    Ok(probes
        .into_iter()
        .flat_map(|p| {
            let lines = params.remove(&p).unwrap_or_default();
            std::iter::once(p).chain(lines)
        })
        .collect())
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
    if !retprobe
        && let Some((binary, file)) = ap.parts.first().and_then(|b| b.rsplit_once('@'))
    {
        return resolve_source_line(ap, kernel, pid, binary, file);
    }
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
    if user.binary.flat && !numeric {
        return Err(diag::binary_unreadable(
            ap.span,
            &user.path,
            "not an ELF file (in raw code, name a place by its file offset: uprobe:FILE:0xOFFSET with --unsafe)",
        ));
    }
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
            parse_number(target).ok_or_else(|| diag::bad_attach_point(ap.span, ap.raw, usage))?;
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
                parse_number(off).ok_or_else(|| diag::bad_attach_point(ap.span, ap.raw, usage))?;
            if retprobe {
                return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
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

/// `uprobe:BINARY@FILE:LINE[:COLUMN]`: where the code of that source line
/// begins, by the binary's DWARF line table.
fn resolve_source_line(
    ap: &AttachPointRef<'_>,
    kernel: &dyn KernelInfo,
    pid: Option<u32>,
    binary: &str,
    file: &str,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    let usage = "uprobe:BINARY@FILE:LINE or uprobe:BINARY@FILE:LINE:COLUMN";
    let number = |i: usize| ap.parts.get(i).and_then(|t| t.parse::<u64>().ok());
    let (Some(line), column) = (number(1), number(2)) else {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    };
    if file.is_empty() || ap.parts.len() > 3 || (ap.parts.len() == 3 && column.is_none()) {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    }
    if binary.contains(['*', '?']) || binary.is_empty() {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    }
    let user = userbin::open_with_debug_symbols(binary, pid, kernel, ap.span)?;
    let address =
        super::debuginfo::line_address(&user.path, kernel, file, line, column.unwrap_or(0))
            .map_err(|why| diag::source_line_unknown(ap.span, ap.raw, &why))?;
    let offset = user
        .binary
        .file_offset(address)
        .ok_or_else(|| diag::address_not_mapped(ap.span, &user.path, address))?;
    let func = placement::function_holding(&user.binary, address)
        .map_or_else(|| format!("{address:#x}"), |s| s.name.clone());
    let place = &ap.raw[ap.raw.find(':').map_or(0, |i| i + 1)..];
    let place = place.split_once('@').map_or(place, |(_, p)| p);
    Ok(vec![ResolvedProbe {
        provider: UPROBE.name,
        attach: abi::Attach::Uprobe {
            path: user.path.clone(),
            offset,
            retprobe: false,
            pid,
            ref_ctr_offset: 0,
            from_wildcard: false,
        },
        section: "uprobe".to_string(),
        name: format!("uprobe:{}@{place}", user.shown),
        context: Context::Uprobe {
            retprobe: false,
            func: func.clone(),
        },
        short: func,
    }])
}

/// A decimal or `0x` hexadecimal number.
pub(crate) fn parse_number(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}
