//! `-l [PATTERN]`: list probes; `-lv` adds their arguments.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use ktypes::KernelInfo;
use runtime::SysKernelInfo;
use sema::providers::glob_match;

pub fn run(pattern: &str, verbose: bool) -> ExitCode {
    let kernel = SysKernelInfo::new();
    // A pattern without a provider matches tracepoints by `category:name`, as bpftrace does.
    let (provider, rest) = match pattern.split_once(':') {
        Some((p, rest)) if matches!(p, "tracepoint" | "t") => ("tracepoint", rest),
        Some((p, rest)) if matches!(p, "uprobe" | "u" | "uretprobe" | "ur" | "usdt" | "U") => {
            let provider = match p {
                "u" => "uprobe",
                "ur" => "uretprobe",
                "U" => "usdt",
                p => p,
            };
            return crate::list_user::run(provider, rest, verbose);
        }
        Some((p, rest))
            if matches!(
                p,
                "kprobe"
                    | "k"
                    | "kretprobe"
                    | "kr"
                    | "kfunc"
                    | "fentry"
                    | "f"
                    | "kretfunc"
                    | "fexit"
                    | "fr"
                    | "rawtracepoint"
                    | "rt"
            ) =>
        {
            return crate::list_kernel::run(p, rest, verbose);
        }
        Some((p, rest)) if matches!(p, "software" | "s" | "hardware" | "h") => {
            let lines = crate::list_perf::lines(matches!(p, "hardware" | "h"), rest);
            let mut out = BufWriter::new(std::io::stdout().lock());
            for line in lines {
                if writeln!(out, "{line}").is_err() {
                    break;
                }
            }
            let _ = out.flush();
            return ExitCode::SUCCESS;
        }
        Some((p, _)) if matches!(p, "profile" | "p" | "interval" | "i") => {
            let name = if matches!(p, "profile" | "p") {
                "profile"
            } else {
                "interval"
            };
            eprintln!("{}", crate::list_perf::timed_provider_error(name));
            return ExitCode::FAILURE;
        }
        Some((p, _)) if sema::providers::provider_kind(p).is_some() => {
            eprintln!("weft: listing {p} probes is not supported yet; tracepoints are");
            return ExitCode::FAILURE;
        }
        _ => ("", pattern),
    };
    let tracepoints = match kernel.tracepoints() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("weft: error: cannot list tracepoints: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    if provider.is_empty() {
        // hardware:, software: and tracepoint: lines, in bpftrace's sorted order.
        for line in crate::list_perf::unqualified(pattern) {
            if writeln!(out, "{line}").is_err() {
                return ExitCode::SUCCESS;
            }
        }
    }
    for (category, name) in tracepoints {
        let full = format!("{category}:{name}");
        let matched = glob_match(rest, &full)
            || (provider.is_empty() && glob_match(pattern, &format!("tracepoint:{full}")));
        if !matched {
            continue;
        }
        if writeln!(out, "tracepoint:{full}").is_err() {
            return ExitCode::SUCCESS;
        }
        if verbose {
            if let Ok(format) = kernel.tracepoint_format(&category, &name) {
                for f in &format.fields {
                    let array = match f.kind {
                        ktypes::FieldKind::Array { len } => format!("[{len}]"),
                        _ => String::new(),
                    };
                    let _ = writeln!(out, "    {} {}{array}", f.c_type, f.name);
                }
            }
        }
    }
    let _ = out.flush();
    ExitCode::SUCCESS
}
