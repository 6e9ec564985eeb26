//! The compiler pipeline in one place: source → syntax → sema → codegen,
//! with the `-d` dumps between stages.

use std::fmt::Write as _;

use codegen::Compiled;
use ktypes::KernelInfo;
use sema::CheckOptions;
use source::{Diagnostic, Diagnostics, SourceMap};
use syntax::ast::Program;

use crate::args::DumpStage;

/// What the compiler produced, or the diagnostics that stopped it.
pub struct Output {
    pub compiled: Compiled,
    /// Warnings (never errors) to show.
    pub warnings: Diagnostics,
}

/// Runs every stage; a stage with errors stops the pipeline.
pub fn compile(
    sources: &SourceMap,
    file: source::FileId,
    kernel: &dyn KernelInfo,
    opts: &CheckOptions,
    codegen_options: &codegen::Options,
    dump: Option<DumpStage>,
    dumps: &mut String,
) -> Result<Output, Diagnostics> {
    let (program, mut diags) = syntax::parse(sources.file(file));
    if matches!(dump, Some(DumpStage::Ast | DumpStage::All)) {
        dumps.push_str(&syntax::print_ast(&program));
    }
    if diags.has_errors() {
        return Err(diags);
    }
    let missing = missing_kernel_features(&program, kernel);
    if !missing.is_empty() {
        return Err(missing.into_iter().collect());
    }
    let (typed, sema_diags) = sema::check(&program, kernel, opts);
    diags.extend(sema_diags.iter().cloned());
    if diags.has_errors() {
        return Err(diags);
    }
    if matches!(dump, Some(DumpStage::Types | DumpStage::All)) {
        dumps.push_str(&sema::print_types(&typed));
    }
    let compiled = codegen::compile_with(&program, &typed, codegen_options).map_err(one)?;
    if matches!(dump, Some(DumpStage::Bpf | DumpStage::All)) {
        for (name, func) in &compiled.functions {
            let _ = writeln!(dumps, "{name}:");
            dumps.push_str(&codegen::disasm::disasm(func));
            dumps.push('\n');
        }
    }
    Ok(Output {
        compiled,
        warnings: diags,
    })
}

fn one(d: Diagnostic) -> Diagnostics {
    let mut ds = Diagnostics::new();
    ds.push(d);
    ds
}

/// Maps a verifier rejection at instruction `insn` of `program` back to the
/// source that produced it.
pub fn verifier_diagnostic(
    compiled: &Compiled,
    program: &str,
    insn: Option<usize>,
    log: &str,
) -> Diagnostic {
    let func = compiled
        .functions
        .iter()
        .find(|(name, _)| program.starts_with(name.as_str()) || name.starts_with(program));
    let span = match (func, insn) {
        (Some((_, f)), Some(i)) => f.spans.get(i).copied(),
        _ => None,
    };
    let reason = log
        .lines()
        .rev()
        .find(|l| {
            !l.trim().is_empty() && !l.starts_with("processed") && !l.contains("verification time")
        })
        .unwrap_or("rejected");
    let mut d = Diagnostic::error(format!(
        "the kernel's verifier rejected probe program `{program}`: {}",
        reason.trim()
    ))
    .with_code("E0503");
    if let Some(span) = span {
        d = d.with_label(
            span,
            format!("instruction {} comes from here", insn.unwrap_or(0)),
        );
    }
    let tail: Vec<&str> = log
        .lines()
        .rev()
        .take(12)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let help = if log.contains("too large")
        || log.contains("too complex")
        || log.contains("infinite loop")
    {
        "the verifier follows every path of the program and gives up after 1,000,000 instructions: bound loops to fewer iterations"
    } else {
        "this is a weft code generation bug if the script is valid: please report it with the script"
    };
    d.with_note(format!("verifier log (last lines):\n{}", tail.join("\n")))
        .with_help(help)
}

/// Probes that need kprobes, checked against the running kernel before
/// anything else, so the user hears what the kernel lacks (not just that
/// weft lacks something).
fn missing_kernel_features(program: &Program, kernel: &dyn KernelInfo) -> Vec<Diagnostic> {
    use sema::providers::{ProviderKind, provider_kind};
    let mut out = Vec::new();
    let mut kprobes: Option<bool> = None;
    let mut trampolines: Option<runtime::Support> = None;
    for item in &program.items {
        let syntax::ast::Item::Probe(probe) = item else {
            continue;
        };
        for ap in &probe.attach_points {
            let kind = match provider_kind(&ap.provider) {
                Some(ProviderKind::Kprobe) => "kprobe",
                Some(ProviderKind::Kretprobe) => "kretprobe",
                Some(ProviderKind::Fentry) => "fentry",
                Some(ProviderKind::Fexit) => "fexit",
                _ => continue,
            };
            let have_kprobes = *kprobes.get_or_insert_with(runtime::kernel_features::kprobes);
            let function = ap.parts.last().map(String::as_str).unwrap_or("");
            let function = function.split('+').next().unwrap_or(function);
            let mut d = if matches!(kind, "fentry" | "fexit") {
                let support = trampolines.get_or_insert_with(runtime::kernel_features::trampolines);
                let runtime::Support::No(why) = support else {
                    continue;
                };
                let d =
                    Diagnostic::error(format!("this kernel cannot attach {kind} probes: {why}"))
                        .with_code("E0454")
                        .with_label(ap.span, "needs BPF trampolines");
                if have_kprobes {
                    let k = if kind == "fexit" {
                        "kretprobe"
                    } else {
                        "kprobe"
                    };
                    out.push(d.with_help(format!(
                        "use a kprobe instead: {k}:{function} (arguments as arg0..argN{})",
                        if kind == "fexit" {
                            ", the result as retval"
                        } else {
                            ""
                        }
                    )));
                    continue;
                }
                d.with_note("kprobes are missing too: this kernel was built without kprobes (CONFIG_KPROBES is off)")
            } else {
                if have_kprobes {
                    continue;
                }
                Diagnostic::error(format!(
                    "this kernel cannot attach {kind} probes: it was built without kprobes (CONFIG_KPROBES is off)"
                ))
                .with_code("E0408")
                .with_label(ap.span, "needs kprobes")
            };
            let kind = if matches!(kind, "fexit" | "kretprobe") {
                "kretprobe"
            } else {
                "kprobe"
            };
            let syscall = function
                .trim_start_matches("vfs_")
                .trim_start_matches("ksys_")
                .trim_start_matches("__x64_sys_");
            let exit = kind == "kretprobe";
            let tp = format!("sys_{}_{syscall}", if exit { "exit" } else { "enter" });
            if kernel.tracepoint_format("syscalls", &tp).is_ok() {
                d = d.with_help(format!(
                    "trace the system call instead: tracepoint:syscalls:{tp}"
                ));
            } else {
                d = d.with_help("look for a tracepoint that covers it: weft -l 'tracepoint:*'");
            }
            out.push(d);
        }
    }
    out
}
