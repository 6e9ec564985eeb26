//! `-l` for kernel function probes and raw tracepoints:
//!
//! - `kprobe:PATTERN` / `kretprobe:PATTERN`: the functions ftrace can patch
//!   (`available_filter_functions`, else the text symbols of `/proc/kallsyms`);
//! - `fentry:PATTERN` (`kfunc`) / `fexit:PATTERN` (`kretfunc`): the functions
//!   of the kernel's BTF; `-lv` prints each parameter (`    struct file * file`)
//!   and the return value (`    ssize_t retval`, for fentry too), as bpftrace does;
//! - `rawtracepoint:PATTERN`: the `btf_trace_*` tracepoints (or tracefs
//!   names without BTF); `-lv` prints their raw arguments.
//!
//! A kernel function probe runs through whichever of kprobes and BPF
//! trampolines the kernel has (`sema::mechanism`), so the list is that of
//! the mechanism it would run through: a kprobe run as fentry lists BTF's
//! functions. When neither works, nothing is listed and stderr says why.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use ktypes::{BtfFunction, KernelInfo};
use runtime::SysKernelInfo;
use sema::mechanism::{Mechanism, Usage, Written, choose};
use sema::providers::glob_match;

pub fn run(provider: &str, pattern: &str, verbose: bool) -> ExitCode {
    let kernel = SysKernelInfo::new();
    let pattern = if pattern.is_empty() { "*" } else { pattern };
    let mut out = BufWriter::new(std::io::stdout().lock());
    let result = match Written::of_provider(provider) {
        None => raw_tracepoints(&kernel, pattern, verbose, &mut out),
        Some(written) => {
            let name = written.name();
            let features = kernel.tracing_features();
            let mechanism = match &features {
                Some(features) => choose(written, features, Usage::default()).mechanism,
                // Unknown features: list as written.
                None if matches!(written, Written::Kprobe | Written::Kretprobe) => {
                    Mechanism::Kprobe
                }
                None => Mechanism::Fentry,
            };
            match mechanism {
                Mechanism::Neither(why) => {
                    let detail = features
                        .as_ref()
                        .and_then(|f| f.trampolines.why_not())
                        .map(|why| format!("; BPF trampolines: {why}"))
                        .unwrap_or_default();
                    eprintln!(
                        "weft: error: this kernel cannot attach {name} probes, so none are listed: {why}{detail}"
                    );
                    return ExitCode::FAILURE;
                }
                Mechanism::Kprobe => kprobes(&kernel, name, pattern, &mut out),
                Mechanism::Fentry => {
                    // Only fentry/fexit have named, typed arguments to show.
                    let verbose = verbose && matches!(written, Written::Fentry | Written::Fexit);
                    trampolines(&kernel, name, pattern, verbose, &mut out)
                }
            }
        }
    };
    let _ = out.flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("weft: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Write errors (a closed pipe) end the listing quietly.
type Listing = Result<(), String>;

fn kprobes(kernel: &SysKernelInfo, name: &str, pattern: &str, out: &mut impl Write) -> Listing {
    let functions = kernel
        .kernel_functions()
        .map_err(|e| format!("cannot list kernel functions: {e}"))?;
    for f in functions {
        let q = f.qualified();
        if (glob_match(pattern, &f.name) || glob_match(pattern, &q))
            && writeln!(out, "{name}:{q}").is_err()
        {
            return Ok(());
        }
    }
    Ok(())
}

fn print_function(out: &mut impl Write, f: &BtfFunction, with_ret: bool) -> std::io::Result<()> {
    for p in &f.params {
        writeln!(out, "    {} {}", p.c_type, p.name)?;
    }
    if let (true, Some(r)) = (with_ret, &f.ret) {
        writeln!(out, "    {} retval", r.c_type)?;
    }
    Ok(())
}

fn trampolines(
    kernel: &SysKernelInfo,
    name: &str,
    pattern: &str,
    verbose: bool,
    out: &mut impl Write,
) -> Listing {
    let btf = kernel
        .btf()
        .map_err(|e| format!("cannot list {name} probes: {e}"))?;
    let pattern = pattern.strip_prefix("vmlinux:").unwrap_or(pattern);
    let names: Vec<&str> = if pattern.contains(['*', '?']) {
        btf.names_of(ktypes::btf::kind::FUNC)
            .into_iter()
            .filter(|n| glob_match(pattern, n))
            .collect()
    } else {
        vec![pattern]
    };
    for n in names {
        let Some(f) = btf.function(n) else { continue };
        if writeln!(out, "{name}:{n}").is_err()
            || (verbose && print_function(out, &f, true).is_err())
        {
            return Ok(());
        }
    }
    Ok(())
}

fn raw_tracepoints(
    kernel: &SysKernelInfo,
    pattern: &str,
    verbose: bool,
    out: &mut impl Write,
) -> Listing {
    let names = sema::providers::rawtracepoint::names(kernel)
        .map_err(|e| format!("cannot list raw tracepoints: {e}"))?;
    let btf = kernel.btf().ok();
    for n in names.iter().filter(|n| glob_match(pattern, n)) {
        if writeln!(out, "rawtracepoint:{n}").is_err() {
            return Ok(());
        }
        if let (true, Some(f)) = (verbose, btf.and_then(|b| b.raw_tracepoint(n))) {
            if print_function(out, &f, false).is_err() {
                return Ok(());
            }
        }
    }
    Ok(())
}
