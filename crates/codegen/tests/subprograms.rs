//! Subprograms (a map loop's callback): how the object carries them, how a
//! program is joined with them for `-d bpf` and verifier messages, and the
//! stack the chain of frames needs.

mod common;

use common::{compile_on, try_compile_with};
use ktypes::FixtureKernel;
use libbpf_rs::ObjectBuilder;

fn compile(src: &str) -> Result<codegen::Compiled, String> {
    try_compile_with(src, &FixtureKernel::typical(), &codegen::Options::default())
}

/// The `NAME:` lines of a disassembly: where each function starts.
fn function_heads(compiled: &codegen::Compiled) -> Vec<String> {
    compiled
        .functions
        .iter()
        .flat_map(|(name, f)| {
            let text = codegen::disasm(f);
            let heads: Vec<String> = text
                .lines()
                .filter(|l| l.ends_with(':'))
                .map(|l| format!("{name}/{}", l.trim_end_matches(':')))
                .collect();
            heads
        })
        .collect()
}

#[test]
fn callbacks_live_in_text_and_libbpf_sees_only_the_programs() {
    let compiled = compile_on(
        "BEGIN { @m[1] = 2; for ($kv : @m) { @s = $kv.1; } } END { for ($kv : @m) { @t = $kv.0; } }",
        &FixtureKernel::typical(),
    );
    let open = ObjectBuilder::default()
        .open_memory(&compiled.elf)
        .expect("libbpf opens the object");
    let programs: Vec<String> = open
        .progs()
        .map(|p| p.name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(programs, ["BEGIN", "END"]);
    // Each program is followed by its own callback, the reference resolved
    // to the callback's first instruction.
    assert_eq!(
        function_heads(&compiled),
        ["BEGIN/BEGIN_for1", "END/END_for1"]
    );
    for (_, f) in &compiled.functions {
        let r = &f.func_refs[0];
        let start = r.insn as i64 + 1 + f.insns[r.insn].imm as i64;
        assert!(start > r.insn as i64 && (start as usize) < f.insns.len());
        assert_eq!(f.spans.len(), f.insns.len());
    }
}

#[test]
fn nested_loops_are_joined_depth_first_as_libbpf_appends_them() {
    // The outer loop's callback references the inner one; a second loop
    // after them comes last.
    let compiled = compile(
        "BEGIN { @a[1] = 1; @b[2] = 2; \
         for ($x : @a) { for ($y : @b) { @n[$x.0, $y.0] = 1; } } \
         for ($z : @b) { @z = $z.1; } }",
    )
    .unwrap();
    assert_eq!(
        function_heads(&compiled),
        ["BEGIN/BEGIN_for1", "BEGIN/BEGIN_for2", "BEGIN/BEGIN_for3"]
    );
}

#[test]
fn frames_of_a_program_and_its_callback_share_the_stack_limit() {
    // Each frame fits in 512 bytes, but the callback's runs on top of the
    // program's (four 64-byte strings in variables, `max_strlen` = 64), whose key holds
    // three more: refused when compiling,
    // at the loop, rather than by the verifier.
    let err = compile(
        "config = { max_strlen = 64 } \
         BEGIN { @m[1] = 1; $a = str(0); $b = str(0); $c = str(0); $d = str(0); \
         for ($kv : @m) { @x[$kv.0, str(1), str(2), str(3)] = 1; } @y = $a; @z = $d; }",
    )
    .err()
    .expect("too deep a stack");
    assert!(err.contains("CODE: E0502"), "{err}");
    assert!(
        err.contains("needs 576 bytes, more than the 512-byte limit"),
        "{err}"
    );
    // The whole loop is marked.
    let caret = format!("{} generated from here", "~".repeat(57));
    assert!(err.contains(&caret), "{err}");
}
