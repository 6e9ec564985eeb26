//! Register allocation on several workers (`Options::workers`): a script of
//! many programs compiles to the same object as on one thread, and an error
//! in any program is the one reported, with its place.

mod common;

use ktypes::FixtureKernel;

fn compile(src: &str, workers: usize) -> Result<codegen::Compiled, String> {
    let options = codegen::Options {
        workers,
        ..codegen::Options::default()
    };
    common::try_compile_with(src, &FixtureKernel::typical(), &options)
}

/// 150 programs, each with a map loop's callback: more than one worker's
/// share, with subprograms to place after each program.
fn many_programs() -> String {
    (0..150)
        .map(|i| {
            format!(
                "tracepoint:syscalls:sys_enter_openat {{ @m{i}[tid] = {i}; \
                 for ($kv : @m{i}) {{ @s{i} = $kv.1 + 1; }} }}\n"
            )
        })
        .collect()
}

#[test]
fn several_workers_build_the_object_one_builds() {
    let src = many_programs();
    let one = compile(&src, 1).expect("compiles");
    assert_eq!(one.functions.len(), 150);
    for workers in [2, 3, 8] {
        let more = compile(&src, workers).expect("compiles");
        assert!(more.elf == one.elf, "{workers} workers: another object");
        let names = |c: &codegen::Compiled| -> Vec<String> {
            c.functions.iter().map(|(n, _)| n.clone()).collect()
        };
        assert_eq!(names(&more), names(&one));
        for ((_, a), (_, b)) in more.functions.iter().zip(&one.functions) {
            assert_eq!(a.insns, b.insns);
        }
    }
}

#[test]
fn an_error_in_a_late_program_is_reported_from_any_worker() {
    // Program 121 keeps nine 64-byte strings in variables: 576 bytes of
    // frame, past the 512-byte stack, found only when its registers and
    // frame are laid out.
    let mut src = many_programs();
    let big: String = (0..9)
        .map(|k| format!("$v{k} = str({k}); "))
        .chain((0..9).map(|k| format!("@keep[{k}] = $v{k}; ")))
        .collect();
    let mut lines: Vec<String> = src.lines().map(String::from).collect();
    lines[120] = format!("tracepoint:syscalls:sys_enter_openat {{ {big}}}");
    // Strings of 64 bytes, on the stack (longer ones live in scratch memory).
    lines[0] = format!("config = {{ max_strlen = 64 }} {}", lines[0]);
    src = lines.join("\n");
    let one = compile(&src, 1).err().expect("too large a frame");
    let two = compile(&src, 2).err().expect("too large a frame");
    assert_eq!(one, two);
    assert!(one.contains("script.bt:121:"), "{one}");
    assert!(one.contains("CODE: E0502"), "{one}");
}
