//! `-l [SEARCH|FILE]`: list probes; `-lv` adds their arguments.
//!
//! As bpftrace's current release lists them:
//! - a search is split at commas; each part is a probe search
//!   (`PROVIDER:PATTERN`, the provider possibly a wildcard; a part without
//!   `:` is `*:PART`) or a C type (`struct task_struct`: its name, or under
//!   `-lv` its definition from the kernel's BTF);
//! - a search whose provider is a wildcard asks every provider that lists
//!   kernel probes (`sema::providers::Listed::Kernel`), and the user-space
//!   ones too when `-p PID` or an existing file scopes it; the providers
//!   answer in name order, each sorted;
//! - an existing file given to `-l`, or `-e PROGRAM`, lists the probes the
//!   script would attach, wildcards expanded.
//!
//! What each provider lists is its own (`ProviderDef::list`, tested in
//! sema without root).

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use runtime::SysKernelInfo;
use sema::providers::{ListQuery, Listed, PROVIDERS, glob_match, planned_provider, provider_def};
use source::SourceMap;

use crate::args::{Args, ListTarget};

pub fn run(target: &ListTarget, args: &Args) -> ExitCode {
    let kernel = SysKernelInfo::with_debuginfo_dirs(args.debuginfo.clone());
    let lines = match target {
        ListTarget::Search(search) => search_lines(search, args, &kernel),
        ListTarget::Script => script_lines(args, &kernel),
    };
    let lines = match lines {
        Ok(lines) => lines,
        Err(e) => {
            eprint!("{e}");
            if !e.ends_with('\n') {
                eprintln!();
            }
            return ExitCode::FAILURE;
        }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in lines {
        // A closed pipe (`weft -l | head`) ends the listing quietly.
        if writeln!(out, "{line}").is_err() {
            return ExitCode::SUCCESS;
        }
    }
    let _ = out.flush();
    ExitCode::SUCCESS
}

/// The lines of `-l SEARCH`, or the error to print.
fn search_lines(search: &str, args: &Args, kernel: &SysKernelInfo) -> Result<Vec<String>, String> {
    // bpftrace's hint: `-l script.bt` for a file that is not there.
    if search.contains('.') && !search.contains([':', '*']) && !args.no_warnings {
        eprintln!(
            "WARNING: It appears that '{search}' is a filename but the file does not exist. Treating '{search}' as a search pattern."
        );
    }
    let mut lines = Vec::new();
    for part in search.split(',') {
        let part = part.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some((keyword, name)) = type_search(&part) {
            lines.extend(type_lines(keyword, name, args.verbose, kernel)?);
            continue;
        }
        lines.extend(probe_lines(&part, args, kernel)?);
    }
    Ok(lines)
}

/// `struct NAME`, `union NAME`, `enum NAME`: a search for C types.
fn type_search(part: &str) -> Option<(&str, &str)> {
    let (keyword, name) = part.split_once(' ')?;
    matches!(keyword, "struct" | "union" | "enum").then_some((keyword, name))
}

/// The kernel's types a type search names: `struct NAME` each, or under
/// `-lv` each definition (`vmlinux: struct NAME { ... };`).
fn type_lines(
    keyword: &str,
    pattern: &str,
    verbose: bool,
    kernel: &SysKernelInfo,
) -> Result<Vec<String>, String> {
    use ktypes::KernelInfo;
    let btf = kernel
        .btf()
        .map_err(|e| format!("ERROR: cannot list kernel types: {e}"))?;
    let mut out = Vec::new();
    for name in btf.definition_names(keyword) {
        if !glob_match(pattern, name) {
            continue;
        }
        if !verbose {
            out.push(format!("{keyword} {name}"));
            continue;
        }
        if let Some(def) = btf
            .find_definition(keyword, name)
            .and_then(|id| btf.c_definition(id))
        {
            out.push(format!("vmlinux: {def}"));
        }
    }
    Ok(out)
}

/// The probes one search part names.
fn probe_lines(part: &str, args: &Args, kernel: &SysKernelInfo) -> Result<Vec<String>, String> {
    let part = match part {
        "" | "*" => "*:*".to_string(),
        p if !p.contains(':') => format!("*:{p}"),
        p => p.to_string(),
    };
    let (provider, pattern) = part.split_once(':').unwrap_or((part.as_str(), "*"));
    // bpftrace 0.17's `-l sched:sched_switch`: a part whose first field is
    // no probe type is searched for in every probe type.
    if !provider.contains(['*', '?'])
        && provider_def(provider).is_none()
        && planned_provider(provider).is_none()
    {
        return probe_lines(&format!("*:{part}"), args, kernel);
    }
    if !provider.contains(['*', '?']) {
        let Some(def) = provider_def(provider) else {
            return Err(match planned_provider(provider) {
                Some(name) => format!("ERROR: weft does not have {name} probes yet"),
                None => format!("ERROR: unknown probe type `{provider}`"),
            });
        };
        let Some(list) = def.list else {
            return Err(format!("ERROR: {} probes have nothing to list", def.name));
        };
        let query = ListQuery {
            provider: def,
            pattern,
            verbose: args.verbose,
            pid: args.pid,
        };
        return list(&query, kernel).map_err(|e| match e.strip_prefix("error: ") {
            Some(why) => format!("ERROR: {why}"),
            None => format!("ERROR: {e}"),
        });
    }
    // A wildcard provider: the kernel's probe types, and the user-space
    // ones when a process or an existing file scopes the search.
    let file = pattern.split(':').next().unwrap_or("");
    let scoped = args.pid.is_some()
        || (!file.contains(['*', '?']) && !file.is_empty() && std::path::Path::new(file).exists());
    let mut defs: Vec<_> = PROVIDERS
        .iter()
        .filter(|d| match d.listed_by {
            Listed::Kernel => true,
            Listed::User => scoped,
            Listed::Named => false,
        })
        .filter(|d| glob_match(provider, d.name))
        .collect();
    defs.sort_by_key(|d| d.name);
    let mut lines = Vec::new();
    for def in defs {
        let Some(list) = def.list else { continue };
        let query = ListQuery {
            provider: def,
            pattern,
            verbose: args.verbose,
            pid: args.pid,
        };
        // A probe type this kernel cannot list (kprobes without kprobes,
        // a pattern that is no file) lists nothing here, as in bpftrace.
        if let Ok(found) = list(&query, kernel) {
            lines.extend(found);
        }
    }
    Ok(lines)
}

/// The probes a script would attach (`-l FILE`, `-l -e PROGRAM`).
fn script_lines(args: &Args, kernel: &SysKernelInfo) -> Result<Vec<String>, String> {
    let mut sources = SourceMap::new();
    let file = crate::read_script(args, &mut sources)?;
    let (program, diags) =
        syntax::parse_with_imports(&mut sources, file, &|_| false, &tracer::imports::DiskFiles);
    if diags.has_errors() {
        return Err(source::render_all(diags.iter(), &sources));
    }
    let (lines, diags) = sema::providers::list_program(&program, kernel, args.pid);
    if diags.has_errors() {
        return Err(source::render_all(diags.iter(), &sources));
    }
    Ok(lines)
}
