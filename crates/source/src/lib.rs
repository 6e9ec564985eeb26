//! Source text, spans and diagnostics shared by every stage of the pipeline.
//!
//! A compilation has one [`SourceMap`]; every file added to it (the main
//! script, later imports) occupies its own range of a single global byte
//! offset space, so a [`Span`] is two `u32`s and still names its file.

#![forbid(unsafe_code)]

mod codes;
mod diagnostic;
mod expansion;
mod span;

pub use codes::Code;
pub use diagnostic::{Diagnostic, Diagnostics, Label, Severity, render, render_all};
pub use expansion::{Expansion, Expansions, VIRTUAL_BASE};
pub use span::{FileId, SourceFile, SourceMap, Span};
