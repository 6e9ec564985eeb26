//! `-l 'uprobe:BINARY:PATTERN'` (function symbols, also for `uretprobe`)
//! and `-l 'usdt:BINARY:[PROVIDER:]PATTERN'` (USDT probes); `-lv` adds
//! each USDT probe's arguments. Sorted and without duplicates, as bpftrace
//! prints them.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

use runtime::SysKernelInfo;
use sema::providers::{glob_match, userbin};

/// Lists the probes of `provider` (`uprobe`, `uretprobe` or `usdt`) that `rest` names.
pub fn run(provider: &str, rest: &str, verbose: bool) -> ExitCode {
    let Some((binary, pattern)) = rest.split_once(':') else {
        eprintln!("weft: error: name the binary to list: weft -l '{provider}:BINARY:*'");
        return ExitCode::FAILURE;
    };
    let kernel = SysKernelInfo::new();
    let mut user = match userbin::open(binary, None, &kernel, source::Span::DUMMY) {
        Ok(u) => u,
        Err(d) => {
            eprintln!("weft: error: {}", d.message);
            return ExitCode::FAILURE;
        }
    };
    if provider != "usdt" {
        user.load_debug_symbols(&kernel);
    }
    let path = &user.path;
    // Full probe name → USDT argument specs (empty for functions).
    let mut probes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if provider == "usdt" {
        let (prov, name) = pattern.split_once(':').unwrap_or(("*", pattern));
        for note in &user.binary.usdt {
            if glob_match(prov, &note.provider) && glob_match(name, &note.name) {
                probes
                    .entry(format!("usdt:{path}:{}:{}", note.provider, note.name))
                    .or_default()
                    .push(note.args.clone());
            }
        }
    } else {
        for f in &user.binary.functions {
            if glob_match(pattern, &f.name) {
                probes.insert(format!("{provider}:{path}:{}", f.name), Vec::new());
            }
        }
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (name, specs) in &probes {
        if writeln!(out, "{name}").is_err() {
            return ExitCode::SUCCESS;
        }
        if verbose && provider == "usdt" {
            // Sites of one probe share its arguments' count; show the first site's.
            let spec = specs.first().map(String::as_str).unwrap_or("");
            match uelf::parse_arg_specs(spec) {
                Ok(args) => {
                    let _ = writeln!(out, "    {} argument(s)", args.len());
                    for (i, a) in args.iter().enumerate() {
                        let sign = if a.signed { "" } else { "u" };
                        let _ = writeln!(out, "    {sign}int{} arg{i}", a.size * 8);
                    }
                }
                Err(e) => {
                    let _ = writeln!(out, "    arguments cannot be read: {e} (spec `{spec}`)");
                }
            }
        }
    }
    let _ = out.flush();
    ExitCode::SUCCESS
}
