//! `-l [PATTERN]`: list probes; `-lv` adds their arguments.
//!
//! What a probe type lists is its provider's (`sema::providers`, each
//! `ProviderDef::list`, tested there without root): `-l PROVIDER:PATTERN`
//! asks that provider; a bare `-l [PATTERN]` asks every provider bpftrace
//! lists there (hardware, software, tracepoint), in its sorted order.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use runtime::SysKernelInfo;
use sema::providers::{ListQuery, PROVIDERS, planned_provider, provider_def};

pub fn run(pattern: &str, verbose: bool) -> ExitCode {
    let kernel = SysKernelInfo::new();
    let lines = match pattern.split_once(':') {
        Some((p, rest)) if provider_def(p).is_some() || planned_provider(p).is_some() => {
            match provider_def(p).and_then(|def| Some((def, def.list?))) {
                Some((def, list)) => list(
                    &ListQuery {
                        provider: def,
                        pattern: rest,
                        verbose,
                        bare: false,
                    },
                    &kernel,
                ),
                None => Err(format!(
                    "listing {p} probes is not supported yet; tracepoints are"
                )),
            }
        }
        _ => {
            let mut bare: Vec<_> = PROVIDERS.iter().filter(|p| p.listed_bare).collect();
            bare.sort_by_key(|p| p.name);
            bare.into_iter()
                .filter_map(|def| Some((def, def.list?)))
                .map(|(def, list)| {
                    let query = ListQuery {
                        provider: def,
                        pattern,
                        verbose,
                        bare: true,
                    };
                    list(&query, &kernel)
                })
                .collect::<Result<Vec<Vec<String>>, String>>()
                .map(|all| all.concat())
        }
    };
    let lines = match lines {
        Ok(lines) => lines,
        Err(e) => {
            eprintln!("weft: {e}");
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
