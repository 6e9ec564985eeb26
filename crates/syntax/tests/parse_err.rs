//! Malformed input: the snapshot is the rendered diagnostics (file `script.bt`).

use source::SourceMap;

const ERR_CASES: &[(&str, &str)] = &[
    (
        "missing_semicolon",
        "BEGIN { $x = 1 $y = 2; print($x) print($y); }",
    ),
    (
        "missing_semicolon_newline",
        "BEGIN {\n  @a = 1\n  @b = 2\n}",
    ),
    ("unterminated_string", "BEGIN { printf(\"hello); }\nEND { }"),
    (
        "string_with_raw_newline_from_seed",
        "tracepoint:syscalls:sys_enter_execve { \n    printf(\"%s called execve\n\", comm); \n}",
    ),
    ("unknown_escape", r#"BEGIN { print("a\qb"); }"#),
    ("bad_hex_escape", r#"BEGIN { print("\xZZ"); }"#),
    ("octal_escape_too_large", r#"BEGIN { print("\777"); }"#),
    (
        "int_too_large",
        "BEGIN { $x = 18446744073709551616; $y = 0xffffffffffffffffff; $z = 100000d; }",
    ),
    ("bad_int_suffix", "BEGIN { $x = 12abc; $y = 1_; $z = 09; }"),
    ("assign_in_predicate", "kprobe:f /pid = 1/ { }"),
    ("missing_block", "kprobe:f print(1); }\nBEGIN { print(2); }"),
    ("attach_point_expected", "kprobe:a, , { }\n{ print(1); }"),
    ("unclosed_paren", "BEGIN { print((1 + 2); }"),
    ("unclosed_brace", "BEGIN { if (1) { print(1); }"),
    ("unterminated_predicate", "kprobe:f /pid == 1 { }"),
    ("invalid_assign_target", "BEGIN { 1 = 2; f() += 3; }"),
    ("invalid_incdec", "BEGIN { 1++; --f(); }"),
    ("let_without_variable", "BEGIN { let x = 1; }"),
    ("top_level_let", "let $x = 1;\nBEGIN { }"),
    ("expected_expression", "BEGIN { $x = ; $y = 1 + ; }"),
    ("else_without_block", "BEGIN { if (1) { } else print(1); }"),
    (
        "bad_type",
        "BEGIN { let $x: 5 = 1; }\nfn f($a: , $b: int): int { }",
    ),
    (
        "unterminated_comment",
        "BEGIN { print(1); } /* never closed",
    ),
    ("unexpected_char", "BEGIN { $x = 1 ` 2; }"),
    ("bad_for", "BEGIN { for $i in 0..10 { } }"),
    ("positional_zero", "BEGIN { print($0); }"),
    (
        "several_errors_recovered",
        "BEGIN { $x = ; }\nkprobe:f /pid = 1/ { @a = 1 @b = 2; }\nEND { print(\"x\\q\"); }",
    ),
    ("unterminated_struct", "struct X { int a;\nBEGIN { }"),
    ("tab_indented", "BEGIN {\n\t\t$x = 1 +;\n}"),
    ("error_at_eof", "BEGIN { print(1)"),
    (
        "stream_bad_clause",
        "stream s {\n    begin tracepoint:a:b by tid\n    bogus 1 2 3\n    end tracepoint:a:c by tid\n}\nBEGIN { }",
    ),
    (
        "stream_keep_without_last",
        "stream s {\n    begin tracepoint:a:b by tid\n    stage tracepoint:a:c by tid keep sideways\n    end tracepoint:a:d by tid as\n}",
    ),
    (
        "stream_missing_probe",
        "stream s {\n    begin { }\n    end tracepoint:a:c by tid\n}",
    ),
    (
        "conditional_directives_unbalanced",
        "#endif\n#if 0\n#else\n#else\n#endif\n#ifndef X\nBEGIN { }",
    ),
];

#[test]
fn err_cases_report_diagnostics() {
    for (name, src) in ERR_CASES {
        let mut map = SourceMap::new();
        let id = map.add("script.bt", *src);
        let (_, diags) = syntax::parse(map.file(id));
        assert!(diags.has_errors(), "{name}: expected an error");
        let snapshot = format!("{src}\n---\n{}", source::render_all(&diags, &map));
        insta::with_settings!({ snapshot_path => "snapshots/err", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(*name, snapshot);
        });
    }
}
