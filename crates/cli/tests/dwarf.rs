//! Uprobes typed by the binary's DWARF, on a C target
//! (`crates/uelf/tests/fixtures/dwarf_target.c`, comm `weftdw`) compiled
//! here: `args.NAME`/`args->NAME` with struct members, arrays, strings and
//! an anonymous union; `print(args)` and `args` in maps; `-lv`; attaching
//! at `@FILE:LINE`; DWARF found in a separate debug file or a `.dwo` given
//! with `--debuginfo`; what a binary without DWARF and a struct passed by
//! value give; bitfields of the binary's structs. `dwarf_target N` calls
//! `take(&v, c, &shape)` with v = 10·i, c = 'a'+i-1,
//! `by_value(-i, origin, 2.5, "lbl")` and `flag_bits(&flags)` for i = 1..N.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use common::{run_weft, scratch};

fn source() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../uelf/tests/fixtures/dwarf_target.c")
}

/// Compiles the target into `dir` (made if missing) with `flags`.
fn compile(dir: &Path, name: &str, flags: &[&str]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let out = dir.join(name);
    let status = Command::new("cc")
        .current_dir(dir)
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(source())
        .status()
        .expect("run cc (the C compiler; scripts/setup.sh installs it)");
    assert!(status.success(), "cc {flags:?} failed");
    out.display().to_string()
}

/// The target with DWARF, at -O0 (every parameter arrives in its register).
fn target() -> &'static str {
    static T: OnceLock<String> = OnceLock::new();
    T.get_or_init(|| compile(&scratch("dwarf"), "dwarf_target", &["-g", "-O0"]))
}

/// The line of the fixture holding `text`, 1-based.
fn line_of(text: &str) -> usize {
    let src = std::fs::read_to_string(source()).unwrap();
    src.lines()
        .position(|l| l.contains(text))
        .expect("the fixture has the line")
        + 1
}

/// `weft ARGS`, expecting success; returns stdout.
fn weft_ok(args: &[&str]) -> String {
    let out = run_weft(args, Duration::from_secs(60));
    common::assert_succeeded(&out);
    out.stdout
}

/// `weft -q -c 'TARGET 3' -e SCRIPT`.
fn trace(script: &str) -> String {
    let cmd = format!("{} 3", target());
    weft_ok(&["-q", "-c", &cmd, "-e", script])
}

/// weft failing to compile `script`: its stderr.
fn compile_error(args: &[&str]) -> String {
    let out = run_weft(args, Duration::from_secs(60));
    assert!(!out.timed_out);
    assert_eq!(out.status, Some(1), "{}\n{}", out.stdout, out.stderr);
    out.stderr
}

#[test]
fn args_reads_parameters_and_their_struct_members() {
    require_root!();
    let bin = target();
    let out = trace(&format!(
        "uprobe:{bin}:take /pid == cpid/ {{ printf(\"%d %c %d %s %d %d %d %d %lu %lx \", *args.n, args.c, args.s.id, args.s.name, args.s.origin->y, args.s->sides[2], args->s->corner.x, args.s.corner.y, args.s.hits, args.s.wide); print(args.s.sides); }}"
    ));
    assert_eq!(
        out.trim_end(),
        "10 a 7 square 4 3 10 20 99 102030405060708 [1,2,3]\n\
         20 b 7 square 4 3 10 20 99 102030405060708 [1,2,3]\n\
         30 c 7 square 4 3 10 20 99 102030405060708 [1,2,3]"
    );
}

#[test]
fn casts_and_declarations_use_the_binarys_structs_below_the_scripts() {
    require_root!();
    let bin = target();
    let out = trace(&format!(
        "uprobe:{bin}:take /pid == cpid/ {{ let $p: struct point *[2] = args.s.points; printf(\"%d %d %d\\n\", ((struct shape *)arg2)->id, $p[1]->y, sizeof(struct shape)); }}"
    ));
    assert_eq!(out.trim_end(), ["7 20 72"; 3].join("\n"));
    // A struct the script defines hides the binary's of that name.
    let out = trace(&format!(
        "struct shape {{ int first; int second; }} uprobe:{bin}:take /pid == cpid/ {{ printf(\"%d %d\\n\", ((struct shape *)arg2)->first, sizeof(struct shape)); }}"
    ));
    assert_eq!(out.trim_end(), ["7 8"; 3].join("\n"));
}

#[test]
fn bitfields_of_the_binarys_structs_read_their_bits() {
    require_root!();
    let bin = target();
    let out = trace(&format!(
        "uprobe:{bin}:flag_bits /pid == cpid/ {{ $f = args.f; @[$f.a, $f.b, $f.c, $f.d, $f.e, $f.s] = count(); @last = *$f; }}"
    ));
    assert_eq!(
        out,
        "\n\n@[1, 2, 5, 0, 65535, 9]: 3\n@last: { .a = 1, .b = 2, .c = 5, .d = 0, .e = 65535, .s = 9 }\n"
    );
}

#[test]
fn args_is_a_record_in_print_and_maps() {
    require_root!();
    let bin = target();
    let out = trace(&format!(
        "uprobe:{bin}:by_value /pid == cpid/ {{ $a = args; @small[args] = count(); @last = $a.small; print(args); }}"
    ));
    let printed: Vec<&str> = out.lines().filter(|l| l.starts_with('{')).collect();
    assert_eq!(printed.len(), 3, "{out}");
    for (i, line) in printed.iter().enumerate() {
        let prefix = format!("{{ .small = -{}, .label = 0x", i + 1);
        assert!(line.starts_with(&prefix) && line.ends_with(" }"), "{line}");
    }
    let label = printed[0]
        .trim_end_matches(" }")
        .rsplit("= ")
        .next()
        .unwrap()
        .to_string();
    assert!(out.contains("@last: -3\n"), "{out}");
    for i in 1..=3 {
        let key = format!("@small[{{ .small = -{i}, .label = {label} }}]: 1\n");
        assert!(out.contains(&key), "{key} in\n{out}");
    }
}

#[test]
fn attaches_at_a_source_line() {
    require_root!();
    let bin = target();
    // The opening brace of `take`: where its code begins, as its symbol.
    let line = line_of("int take(") + 1;
    let out = trace(&format!(
        "uprobe:{bin}@dwarf_target.c:{line} /pid == cpid/ {{ @line[reg(\"pc\")] = count(); }} uprobe:{bin}:take /pid == cpid/ {{ @entry[reg(\"pc\")] = count(); }} END {{ print(@line); print(@entry); clear(@line); clear(@entry); }}"
    ));
    let lines: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 2, "{out}");
    let line_pc = lines[0].strip_prefix("@line[").unwrap();
    let entry_pc = lines[1].strip_prefix("@entry[").unwrap();
    assert_eq!(line_pc, entry_pc);
    assert!(line_pc.ends_with("]: 3"), "{out}");
}

#[test]
fn lists_parameters_with_their_types() {
    let bin = target();
    assert_eq!(
        weft_ok(&["-lv", &format!("uprobe:{bin}:by_value")]),
        format!(
            "uprobe:{bin}:by_value\n    short int small\n    struct point p\n    double ratio\n    const char* label\n"
        )
    );
    assert_eq!(
        weft_ok(&["-lv", &format!("uprobe:{bin}:ta*")]),
        format!("uprobe:{bin}:take\n    int* n\n    char c\n    struct shape* s\n")
    );
    // Without -v, the names alone.
    assert_eq!(
        weft_ok(&["-l", &format!("uprobe:{bin}:take")]),
        format!("uprobe:{bin}:take\n")
    );
}

#[test]
fn separate_debug_file_in_a_debuginfo_directory() {
    let dir = scratch("dwarf-separate");
    let bin = compile(&dir, "stripped", &["-g", "-O0"]);
    let debug_dir = dir.join("debug");
    std::fs::create_dir_all(&debug_dir).unwrap();
    let debug = debug_dir.join("stripped.debug");
    for args in [
        vec![
            "--only-keep-debug".to_string(),
            bin.clone(),
            debug.display().to_string(),
        ],
        vec!["--strip-debug".to_string(), bin.clone()],
    ] {
        let status = Command::new("objcopy")
            .args(&args)
            .status()
            .expect("run objcopy");
        assert!(status.success());
    }
    let probe = format!("uprobe:{bin}:take");
    // Without the directory, no parameters; with it (relative to the
    // binary, as elfutils takes it), the debug file's.
    assert_eq!(weft_ok(&["-lv", &probe]), format!("{probe}\n"));
    assert_eq!(
        weft_ok(&["-lv", &probe, "--debuginfo=./debug"]),
        format!("{probe}\n    int* n\n    char c\n    struct shape* s\n")
    );
    // A debug link to a file in `.debug/` beside the binary: found as gdb finds it.
    let linked = compile(&dir, "linked", &["-g", "-O0"]);
    let hidden = dir.join(".debug");
    std::fs::create_dir_all(&hidden).unwrap();
    let linked_debug = hidden.join("linked.debug").display().to_string();
    for args in [
        vec!["--only-keep-debug", linked.as_str(), linked_debug.as_str()],
        vec!["--strip-debug", linked.as_str()],
        vec![
            "--add-gnu-debuglink",
            linked_debug.as_str(),
            linked.as_str(),
        ],
    ] {
        let status = Command::new("objcopy")
            .args(&args)
            .status()
            .expect("run objcopy");
        assert!(status.success());
    }
    let linked_probe = format!("uprobe:{linked}:take");
    assert_eq!(
        weft_ok(&["-lv", &linked_probe]),
        format!("{linked_probe}\n    int* n\n    char c\n    struct shape* s\n")
    );
    let err = compile_error(&["-e", &format!("{probe} {{ print(args.c); }}")]);
    assert!(err.contains("CODE: E0218"), "{err}");
    assert!(
        err.contains(&format!("{bin} has no DWARF debug information")),
        "{err}"
    );
    assert!(err.contains("--debuginfo=DIR"), "{err}");
}

#[test]
fn split_dwarf_in_a_dwo_found_through_debuginfo() {
    let dir = scratch("dwarf-split");
    let bin = compile(&dir, "split", &["-g", "-O0", "-gsplit-dwarf"]);
    // The .dwo moves away from where the compiler recorded it.
    let moved = dir.join("dwo");
    std::fs::create_dir_all(&moved).unwrap();
    let dwo = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().ends_with(".dwo"))
        .expect("cc wrote a .dwo");
    std::fs::rename(dwo.path(), moved.join(dwo.file_name())).unwrap();
    let script = format!("uprobe:{bin}:take {{ print(args.c); }}");
    let err = compile_error(&["-e", &script]);
    assert!(err.contains("CODE: E0218"), "{err}");
    assert!(err.contains(".dwo could not be found"), "{err}");
    let moved_dir = moved.display().to_string();
    let probe = format!("uprobe:{bin}:take");
    assert_eq!(
        weft_ok(&["-lv", &probe, "--debuginfo", &moved_dir]),
        format!("{probe}\n    int* n\n    char c\n    struct shape* s\n")
    );
}

#[test]
fn split_dwarf_in_a_dwp_package_beside_the_binary() {
    // DWARF 4 (GNU split DWARF): binutils' dwp packs only that.
    let dir = scratch("dwarf-dwp");
    let bin = compile(&dir, "packed", &["-g", "-O0", "-gsplit-dwarf", "-gdwarf-4"]);
    let dwo = dir.join("packed-dwarf_target.dwo");
    let status = Command::new("dwp")
        .arg("-o")
        .arg(format!("{bin}.dwp"))
        .arg(&dwo)
        .status()
        .expect("run dwp (binutils)");
    assert!(status.success());
    std::fs::remove_file(&dwo).unwrap();
    let probe = format!("uprobe:{bin}:take");
    assert_eq!(
        weft_ok(&["-lv", &probe]),
        format!("{probe}\n    int* n\n    char c\n    struct shape* s\n")
    );
}

#[test]
fn what_args_cannot_read_is_one_clear_error() {
    let bin = target();
    let err = compile_error(&["-e", &format!("uprobe:{bin}:by_value {{ print(args.p); }}")]);
    assert!(err.contains("CODE: E0355"), "{err}");
    assert!(
        err.contains("a `struct point` passed by value takes 1 argument register, which `args` does not read; read them as arg1"),
        "{err}"
    );
    let err = compile_error(&[
        "-e",
        &format!("uprobe:{bin}:by_value {{ print(args.ratio); }}"),
    ]);
    assert!(err.contains("floating-point register"), "{err}");
    let err = compile_error(&["-e", &format!("uretprobe:{bin}:take {{ print(args.c); }}")]);
    assert!(
        err.contains("CODE: E0218") && err.contains("uretprobe"),
        "{err}"
    );
    let err = compile_error(&["-e", &format!("uprobe:{bin}:take {{ print(args.nope); }}")]);
    assert!(err.contains("has no argument `nope`"), "{err}");
    let err = compile_error(&[
        "-e",
        &format!("uprobe:{bin}@dwarf_target.c:1 {{ exit(); }}"),
    ]);
    assert!(
        err.contains("CODE: E0219") && err.contains("dwarf_target.c:1"),
        "{err}"
    );
}

#[test]
fn variables_declared_with_struct_and_struct_array_types_hold_them() {
    require_root!();
    let bin = target();
    // `let $ps: struct P[1]` (the script's struct) and `let $c: struct
    // point` (the binary's) hold copies; `$s.ps` reads through the pointer.
    let out = trace(&format!(
        "struct P {{ int x; int y; }}; struct S {{ int id; char name[8]; struct P ps[1]; }}; \
         uprobe:{bin}:take /pid == cpid/ {{ let $s: struct S *; let $ps: struct P[1]; let $c: struct point; \
         $s = (struct S *)arg2; $ps = $s.ps; $c = args.s.corner; printf(\"%d %d %d\\n\", $ps[0].x, $ps[0].y, $c.y); }}"
    ));
    assert_eq!(out.trim_end(), ["1 2 20"; 3].join("\n"));
}

#[test]
fn floating_point_members_print_as_null() {
    require_root!();
    let bin = target();
    // BPF has no floating point: as bpftrace, a struct holding a `float`
    // or `double` prints it `null`, in text and JSON.
    let script = format!(
        "union N {{ int i; float f; }}; struct F {{ int id; union N n; double d; }}; \
         uprobe:{bin}:take /pid == cpid/ {{ print(*(struct F *)arg2); }}"
    );
    let out = trace(&script);
    // `name` is "square": its first four bytes read as an int.
    let i = i32::from_le_bytes(*b"squa");
    assert_eq!(
        out.trim_end(),
        vec![format!("{{ .id = 7, .n = {{ .i = {i}, .f = null }}, .d = null }}"); 3].join("\n")
    );
    let cmd = format!("{} 1", target());
    let out = weft_ok(&["-q", "-f", "json", "-c", &cmd, "-e", &script]);
    assert_eq!(
        out.trim_end(),
        format!(
            r#"{{"type": "value", "data": {{"id": 7, "n": {{"i": {i}, "f": null}}, "d": null}}}}"#
        )
    );
}

#[test]
fn an_index_past_an_arrays_end_warns_where() {
    require_root!();
    let bin = target();
    // `sides` has 3 elements: `$i = 1` reads one quietly, `$j = 3` warns as
    // bpftrace does (then reads past the end all the same: `origin`'s
    // first bytes, not asserted). A literal index is checked when compiling.
    let script = format!(
        "uprobe:{bin}:take /pid == cpid/ {{ $i = 1; $j = 3; @in = args.s.sides[$i]; @out = args.s.sides[$j]; }}"
    );
    let cmd = format!("{} 2", target());
    let out = run_weft(&["-q", "-c", &cmd, "-e", &script], Duration::from_secs(60));
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("@in: 2\n"), "{}", out.stdout);
    let from = script.find("args.s.sides[$j]").unwrap();
    let once = format!(
        "stdin:1:{}-{}: WARNING: Array access out of bounds. This can lead to unexpected results.\n{script}\n{}{}\n",
        from + 1,
        from + 1 + "args.s.sides[$j]".len(),
        " ".repeat(from),
        "~".repeat("args.s.sides[$j]".len())
    );
    assert_eq!(out.stderr, format!("{once}{once}"));
}

#[test]
fn buf_of_an_array_gives_its_bytes() {
    require_root!();
    let bin = target();
    // `sides` is `int[3]` = {1, 2, 3}: all 12 bytes, or as many as asked.
    let out = trace(&format!(
        "uprobe:{bin}:take /pid == cpid/ {{ printf(\"%r|%r\\n\", buf(args.s.sides), buf(args.s.sides, 5)); }}"
    ));
    assert_eq!(
        out.trim_end(),
        [r"\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00|\x01\x00\x00\x00\x02"; 3].join("\n")
    );
}
