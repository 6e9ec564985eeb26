//! The bpftrace language front end: lexer, error-recovering parser, AST and
//! AST printer.
//!
//! [`parse`] always returns a [`Program`] (partial when there were errors)
//! together with the diagnostics; it never panics and always terminates.

#![forbid(unsafe_code)]

pub mod ast;
pub mod diagnostics;
mod lexer;
mod parser;
mod printer;

pub use ast::*;
pub use parser::MAX_DEPTH;
pub use printer::{print_ast, print_ast_with_spans};

use source::{Diagnostics, SourceFile};

/// Parses one source file of a [`source::SourceMap`].
pub fn parse(file: &SourceFile) -> (Program, Diagnostics) {
    parse_text(&file.text, file.base)
}

/// Parses `text` whose first byte sits at global offset `base`.
pub fn parse_text(text: &str, base: u32) -> (Program, Diagnostics) {
    let (program, diags) = parser::Parser::new(text, base).program();
    (program, diags.into_iter().collect())
}
