//! The compiler pipeline in one place: source → syntax → sema → codegen,
//! with the `-d` dumps between stages.

use std::fmt::Write as _;

use codegen::Compiled;
use ktypes::KernelInfo;
use sema::CheckOptions;
use source::{Code, Diagnostic, Diagnostics, SourceMap};

use crate::args::DumpStage;

/// What the compiler produced, or the diagnostics that stopped it.
pub struct Output {
    pub compiled: Compiled,
    /// Warnings (never errors) to show.
    pub warnings: Diagnostics,
    /// What `-v` adds: which mechanism each kernel function probe runs through, and why.
    pub notes: Vec<String>,
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
    let planned = sema::mechanism::plan(&program, kernel);
    let missing = missing_kernel_features(&planned, kernel);
    if !missing.is_empty() {
        return Err(missing.into_iter().collect());
    }
    let notes = planned
        .iter()
        .map(|p| format!("weft: {}: {}", p.raw, p.choice.why))
        .collect();
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
        notes,
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
    .with_code(Code::E0503);
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

/// Kernel function probes that can run neither as written nor through the
/// other mechanism (`sema::mechanism`), reported before anything else, so
/// the user hears what the kernel lacks (not just that weft lacks something).
fn missing_kernel_features(
    planned: &[sema::mechanism::Planned],
    kernel: &dyn KernelInfo,
) -> Vec<Diagnostic> {
    use sema::mechanism::{Mechanism, Written};
    let mut out = Vec::new();
    let mut trampolines: Option<runtime::Support> = None;
    for p in planned {
        let Mechanism::Neither(why) = &p.choice.mechanism else {
            continue;
        };
        let kind = p.written.name();
        let exit = matches!(p.written, Written::Kretprobe | Written::Fexit);
        let mut d = match p.written {
            Written::Fentry | Written::Fexit => {
                let support = trampolines.get_or_insert_with(runtime::kernel_features::trampolines);
                let lacking = match support {
                    runtime::Support::No(detail) => detail.clone(),
                    runtime::Support::Yes => "it has no BTF".to_string(),
                };
                Diagnostic::error(format!("this kernel cannot attach {kind} probes: {lacking}"))
                    .with_code(Code::E0454)
                    .with_label(p.span, "needs BPF trampolines")
                    .with_note(format!("weft cannot run it as a kprobe either: {why}"))
            }
            Written::Kprobe | Written::Kretprobe => Diagnostic::error(format!(
                "this kernel cannot attach {kind} probes: it was built without kprobes (CONFIG_KPROBES is off)"
            ))
            .with_code(Code::E0408)
            .with_label(p.span, "needs kprobes")
            .with_note(format!("weft cannot run it as fentry either: {why}")),
        };
        let function = p.function.as_str();
        let syscall = function
            .trim_start_matches("vfs_")
            .trim_start_matches("ksys_")
            .trim_start_matches("__x64_sys_");
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
    out
}

/// The kernel as `--emit-elf` and `-d` see it: probes are compiled as
/// written (a kprobe stays a kprobe), not fitted to, or refused for, what
/// this machine's kernel can attach; the object may be meant for another.
pub struct AsWritten<'a>(pub &'a dyn KernelInfo);

impl KernelInfo for AsWritten<'_> {
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<ktypes::TracepointFormat, ktypes::KernelInfoError> {
        self.0.tracepoint_format(category, name)
    }

    fn tracepoints(&self) -> Result<Vec<(String, String)>, ktypes::KernelInfoError> {
        self.0.tracepoints()
    }

    fn read_file(&self, path: &str) -> Result<Vec<u8>, ktypes::KernelInfoError> {
        self.0.read_file(path)
    }

    fn ifunc_target(&self, path: &str, symbol: &str) -> Result<u64, ktypes::KernelInfoError> {
        self.0.ifunc_target(path, symbol)
    }

    fn executable_search_path(&self) -> Vec<String> {
        self.0.executable_search_path()
    }

    fn btf(&self) -> Result<&ktypes::Btf, ktypes::KernelInfoError> {
        self.0.btf()
    }

    fn tracing_features(&self) -> Option<ktypes::TracingFeatures> {
        None
    }

    fn kernel_functions(&self) -> Result<Vec<ktypes::KernelFunction>, ktypes::KernelInfoError> {
        self.0.kernel_functions()
    }
}
