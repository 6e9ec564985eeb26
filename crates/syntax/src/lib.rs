//! The bpftrace language front end: lexer, error-recovering parser, AST and
//! AST printer.
//!
//! [`parse`] always returns a [`Program`] (partial when there were errors)
//! together with the diagnostics; it never panics and always terminates.

#![forbid(unsafe_code)]

pub mod ast;
mod config_record;
mod container_of;
mod cpp;
pub mod diagnostics;
mod expand;
mod imports;
mod lexer;
mod named;
mod parser;
mod positional;
mod printer;
mod task_macros;
pub mod visit;

pub use ast::*;
pub use config_record::{ConfigLiteral, substitute_config};
pub use container_of::expand_container_of;
pub use cpp::{Predefined, eval_c_expr};
pub use expand::{MAX_EXPANDED_NODES, expand_macros, var_display_name};
pub use imports::{EntryKind, ImportFiles, parse_with_imports};
pub use named::{NamedOutcome, NamedParam, substitute_named};
pub use parser::MAX_DEPTH;
pub use positional::{positional_int, substitute_positionals};
pub use printer::{print_ast, print_ast_with_spans};
pub use task_macros::expand_task_macros;

use source::{Diagnostics, SourceFile};

/// Parses one source file of a [`source::SourceMap`], with no predefined
/// macros (see [`parse_with`]).
pub fn parse(file: &SourceFile) -> (Program, Diagnostics) {
    parse_text(&file.text, file.base)
}

/// Parses one source file, with `predefined` saying which macro names the
/// preprocessor's `#if`/`#ifdef` groups see as defined before the script's
/// own `#define`s (`BPFTRACE_HAVE_BTF` on a kernel with BTF). Lines of a
/// false group are skipped unparsed, as bpftrace's preprocessor drops them.
///
/// Macro calls are expanded (see [`expand_macros`]); [`parse_unexpanded`]
/// keeps them.
pub fn parse_with(file: &SourceFile, predefined: Predefined<'_>) -> (Program, Diagnostics) {
    let (mut program, mut diags) = parser::Parser::new(&file.text, file.base, predefined).program();
    if !diags.iter().any(source::Diagnostic::is_error) {
        diags.extend(expand_macros(&mut program));
        expand_task_macros(&mut program);
        expand_container_of(&mut program);
    }
    (program, diags.into_iter().collect())
}

/// Parses `text` whose first byte sits at global offset `base`, and expands its macros.
pub fn parse_text(text: &str, base: u32) -> (Program, Diagnostics) {
    let (mut program, mut diags) = parser::Parser::new(text, base, &|_| false).program();
    if !diags.iter().any(source::Diagnostic::is_error) {
        diags.extend(expand_macros(&mut program));
        expand_task_macros(&mut program);
        expand_container_of(&mut program);
    }
    (program, diags.into_iter().collect())
}

/// Parses `text` as written: macro calls stay calls.
pub fn parse_unexpanded(text: &str, base: u32) -> (Program, Diagnostics) {
    let (program, diags) = parser::Parser::new(text, base, &|_| false).program();
    (program, diags.into_iter().collect())
}
