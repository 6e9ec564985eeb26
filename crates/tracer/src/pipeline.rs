//! The compiler pipeline in one place: source → syntax → sema → codegen,
//! with the `-d` dumps between stages.

use std::fmt::Write as _;

use codegen::Compiled;
use ktypes::KernelInfo;
use sema::CheckOptions;
use source::{Code, Diagnostic, Diagnostics, SourceMap, Span};

/// What the compiler produced, or the diagnostics that stopped it.
/// `-d STAGE`: what the pipeline prints on its way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpStage {
    Ast,
    Types,
    Bpf,
    All,
}

pub struct Output {
    pub compiled: Compiled,
    /// Warnings (never errors) to show.
    pub warnings: Diagnostics,
    /// What `-v` adds: which mechanism each kernel function probe runs through, and why.
    pub notes: Vec<String>,
    /// The options the script's `getopt()` calls name, and values that did
    /// not read as their type.
    pub named: syntax::NamedOutcome,
    /// The parsed and checked script the object was made from, the largest
    /// thing compiling makes: a run drops it before it starts
    /// ([`Output::without_front`]); writing the object and exiting leaves it
    /// unfreed.
    pub front: Option<Box<dyn std::any::Any>>,
}

impl Output {
    /// The output with the parsed and checked script freed.
    pub fn without_front(mut self) -> Output {
        self.front = None;
        self
    }
}

/// Runs every stage; a stage with errors stops the pipeline.
pub fn compile(
    sources: &mut SourceMap,
    file: source::FileId,
    kernel: &dyn KernelInfo,
    opts: &CheckOptions,
    codegen_options: &codegen::Options,
    dump: Option<DumpStage>,
    dumps: &mut String,
) -> Result<Output, Diagnostics> {
    let predefined = |name: &str| sema::predefined_macro(kernel, name);
    // Imported files join `sources`, so diagnostics can name their lines.
    let (mut program, mut diags) =
        syntax::parse_with_imports(sources, file, &predefined, &crate::imports::DiskFiles);
    syntax::substitute_positionals(&mut program, &opts.positional);
    let (named, named_diags) = syntax::substitute_named(&mut program, &opts.named);
    diags.extend(named_diags);
    let settings = sema::config::settings(&program, &opts.env);
    diags.extend(syntax::substitute_config(&mut program, &|key| {
        Some(match settings.get(key)? {
            sema::config::ConfigValue::Int(n) => syntax::ConfigLiteral::Int(n),
            sema::config::ConfigValue::Bool(b) => syntax::ConfigLiteral::Bool(b),
            sema::config::ConfigValue::Str(s) => syntax::ConfigLiteral::Str(s),
        })
    }));
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
    place_messages(sources, &mut compiled);
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
        named,
        front: Some(Box::new((program, typed))),
    })
}

/// Gives each `errorf`/`warnf` call the places its message names: the call
/// (in a macro's text, when it is there) and each macro use it came through.
fn place_messages(sources: &SourceMap, compiled: &mut Compiled) {
    let expansions = &compiled.expansions;
    for spec in &mut compiled.manifest.printfs {
        if !matches!(
            spec.action,
            abi::PrintfAction::Error
                | abi::PrintfAction::Warning
                | abi::PrintfAction::RuntimeWarning
        ) {
            continue;
        }
        let (call, uses) = expansions.resolve(Span::new(spec.span.0, spec.span.1));
        spec.origin = std::iter::once(call)
            .chain(uses.into_iter().map(|(span, _)| span))
            .filter_map(|span| source_place(sources, span))
            .collect();
    }
}

/// Where `span` is, with its lines as bpftrace shows them under a message
/// (tabs as four spaces; `~` under the text of a one-line place).
fn source_place(sources: &SourceMap, span: Span) -> Option<abi::SourcePlace> {
    let file = sources.file_of(span.start)?;
    let (line, column) = file.line_col(span.start);
    let (end_line, end_column) = file.line_col(span.end);
    let context = if line == end_line {
        let text = file.line_text(line);
        let shown: String = text
            .chars()
            .map(|c| {
                if c == '\t' {
                    "    ".to_string()
                } else {
                    c.to_string()
                }
            })
            .collect();
        let marks: String = text
            .chars()
            .take(end_column.saturating_sub(1))
            .enumerate()
            .map(|(i, c)| {
                let mark = if i + 1 < column { " " } else { "~" };
                if c == '\t' {
                    mark.repeat(4)
                } else {
                    mark.to_string()
                }
            })
            .collect();
        vec![shown, marks]
    } else {
        (line..=end_line)
            .map(|l| file.line_text(l).to_string())
            .collect()
    };
    Some(abi::SourcePlace {
        file: file.name.clone(),
        line: line as u32,
        column: column as u32,
        end_line: end_line as u32,
        end_column: end_column as u32,
        context,
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
    // After "infinite loop detected" the verifier prints the two states it
    // compared: the reason is the line before them.
    let reason = log
        .lines()
        .rev()
        .find(|l| l.starts_with("infinite loop detected"))
        .or_else(|| {
            log.lines().rev().find(|l| {
                !l.trim().is_empty()
                    && !l.starts_with("processed")
                    && !l.contains("verification time")
            })
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
    let help = if log.contains("infinite loop") {
        "the verifier could not see this loop end: it does not follow values kept in maps, such as a stream's `$fields` (kept in the instance's record) or `@maps`, so a loop counted by one looks endless to it; count the loop with a `let` variable (kept on the program's stack), or write `for ($i : 0..N)`"
    } else if log.contains("cannot use helper") {
        "this kernel does not give that helper to this kind of program: a kernel locked down, or built without it, refuses the helpers that change the system (bpf_probe_write_user, bpf_override_return)"
    } else if log.contains("too large") || log.contains("too complex") {
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
