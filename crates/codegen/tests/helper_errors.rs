//! `-k`/`-kk` in generated code: a checked helper call branches on its
//! result and sends a `HelperError` record naming its call site; without
//! the flags the code is what it always was.

mod common;

use ktypes::FixtureKernel;
use sema::{CheckOptions, check};
use source::SourceMap;

fn compile(src: &str, level: abi::HelperErrors) -> codegen::Compiled {
    let kernel = FixtureKernel::typical();
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, diags) = syntax::parse(map.file(id));
    assert!(!diags.has_errors());
    let (typed, diags) = check(&program, &kernel, &CheckOptions::default());
    assert!(
        !diags.has_errors(),
        "{}",
        source::render_all(diags.iter(), &map)
    );
    let options = codegen::Options {
        helper_errors: level,
        ..codegen::Options::default()
    };
    codegen::compile_with(&program, &typed, &options).expect("compiles")
}

/// The helpers whose failures the program reports, in code order.
fn helpers(c: &codegen::Compiled) -> Vec<&str> {
    c.manifest
        .helper_sites
        .iter()
        .map(|s| s.helper.as_str())
        .collect()
}

const SCRIPT: &str =
    "tracepoint:syscalls:sys_enter_openat { @[tid] = 1; $s = str(args->filename); }";

#[test]
fn k_checks_the_map_update_and_not_the_read() {
    let c = compile(SCRIPT, abi::HelperErrors::Helpers);
    assert_eq!(helpers(&c), ["map_update_elem"]);
    assert_eq!(c.manifest.helper_sites[0].span, (39, 45));
    assert_eq!(
        c.manifest.helper_sites[0].probe,
        "tracepoint:syscalls:sys_enter_openat"
    );
    insta::assert_snapshot!(common::disasm(&c));
}

#[test]
fn kk_checks_the_read_too_and_no_flag_checks_nothing() {
    let c = compile(SCRIPT, abi::HelperErrors::WithReads);
    assert_eq!(helpers(&c), ["map_update_elem", "probe_read_str"]);
    let off = compile(SCRIPT, abi::HelperErrors::Off);
    assert!(off.manifest.helper_sites.is_empty());
    // Without the flags, the code of the default options.
    assert_eq!(common::disasm(&off), common::lower(SCRIPT));
}
