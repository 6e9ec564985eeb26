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
    let predefined = |name: &str| sema::predefined_macro(kernel, name);
    let (mut program, mut diags) = syntax::parse_with(sources.file(file), &predefined);
    syntax::substitute_positionals(&mut program, &opts.positional);
    let (directives, directive_diags) =
        sema::metrics::parse_directives(&sources.file(file).text, sources.file(file).base);
    diags.extend(directive_diags.iter().cloned());
    if matches!(dump, Some(DumpStage::Ast | DumpStage::All)) {
        dumps.push_str(&syntax::print_ast(&program));
    }
    if diags.has_errors() {
        return Err(diags);
    }
    let (typed, sema_diags) = sema::check(&program, kernel, opts);
    diags.extend(sema_diags.iter().cloned());
    if diags.has_errors() {
        return Err(diags);
    }
    let (exports, export_diags) = sema::metrics::exports(&typed, &directives);
    diags.extend(export_diags.iter().cloned());
    if diags.has_errors() {
        return Err(diags);
    }
    let notes = typed
        .planned
        .iter()
        .map(|p| format!("weft: {}: {}", p.raw, p.choice.why))
        .collect();
    if matches!(dump, Some(DumpStage::Types | DumpStage::All)) {
        dumps.push_str(&sema::print_types(&typed));
    }
    let mut compiled = codegen::compile_with(&program, &typed, codegen_options).map_err(one)?;
    compiled.manifest.exports = exports;
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
    let mut d = d
        .with_note(format!("verifier log (last lines):\n{}", tail.join("\n")))
        .with_help(help);
    compiled.expansions.fix(&mut d);
    d
}
