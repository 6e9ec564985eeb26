//! Compiling a script against a fixture kernel, for the lowering snapshots.

#![allow(dead_code)]

use ktypes::FixtureKernel;
use sema::{CheckOptions, check};
use source::SourceMap;

/// Parses, checks and compiles `src` on `kernel`; panics with the rendered
/// diagnostics when the script is rejected.
pub fn compile_on(src: &str, kernel: &FixtureKernel) -> codegen::Compiled {
    try_compile_with(src, kernel, &codegen::Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Parses and checks `src` on `kernel` (panicking with the rendered
/// diagnostics when it is rejected), then compiles it with `options`: the
/// code generator's own error, rendered, is the `Err`.
pub fn try_compile_with(
    src: &str,
    kernel: &FixtureKernel,
    options: &codegen::Options,
) -> Result<codegen::Compiled, String> {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, diags) = syntax::parse_with(map.file(id), &|n| sema::predefined_macro(kernel, n));
    assert!(
        !diags.has_errors(),
        "{}",
        source::render_all(diags.iter(), &map)
    );
    let (typed, diags) = check(&program, kernel, &CheckOptions::default());
    assert!(
        !diags.has_errors(),
        "{}",
        source::render_all(diags.iter(), &map)
    );
    codegen::compile_with(&program, &typed, options).map_err(|d| source::render_all([&d], &map))
}

/// Every program's disassembly, headed by its symbol.
pub fn disasm(compiled: &codegen::Compiled) -> String {
    compiled
        .functions
        .iter()
        .map(|(name, func)| format!("{name}:\n{}", codegen::disasm(func)))
        .collect()
}

/// Every program's disassembly, headed by its symbol, section and attach point.
pub fn disasm_with_attach(compiled: &codegen::Compiled) -> String {
    compiled
        .manifest
        .programs
        .iter()
        .zip(&compiled.functions)
        .map(|(p, (name, func))| {
            format!(
                "{name} ({}, {:?}):\n{}",
                p.section,
                p.attach,
                codegen::disasm(func)
            )
        })
        .collect()
}

/// `disasm` of `src` compiled on the typical fixture kernel.
pub fn lower(src: &str) -> String {
    disasm(&compile_on(src, &FixtureKernel::typical()))
}
