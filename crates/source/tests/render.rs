//! Rendering of diagnostics against a source map.

use source::{Code, Diagnostic, Diagnostics, SourceMap, Span, render, render_all};

fn one_file(text: &str) -> SourceMap {
    let mut map = SourceMap::new();
    map.add("script.bt", text);
    map
}

#[test]
fn primary_label_help_and_note() {
    let map = one_file("kprobe:f { foo(); }");
    let d = Diagnostic::error("unknown function 'foo'")
        .with_code(Code::E0203)
        .with_label(Span::new(11, 14), "not a function")
        .with_help("did you mean 'print'?")
        .with_note("functions are listed by `weft --list-functions`");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:1:12: error[E0203]: unknown function 'foo'
      |
    1 | kprobe:f { foo(); }
      |            ^^^ not a function
      = help: did you mean 'print'?
      = note: functions are listed by `weft --list-functions`
    ");
}

#[test]
fn no_labels_names_the_tool() {
    let map = SourceMap::new();
    let d = Diagnostic::error("no probes in script").with_help("add `BEGIN { }`");
    insta::assert_snapshot!(render(&d, &map), @r"
    weft: error: no probes in script
      = help: add `BEGIN { }`
    ");
}

#[test]
fn warning_without_code() {
    let map = one_file("BEGIN { 1 }");
    let d = Diagnostic::warning("unused value").with_label(Span::new(8, 9), "");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:1:9: warning: unused value
      |
    1 | BEGIN { 1 }
      |         ^
    ");
}

#[test]
fn gutter_grows_with_line_number_and_secondary_labels() {
    let text = format!(
        "{}BEGIN {{ $x = 1; }}\nEND {{ print($x); }}\n",
        "\n".repeat(9)
    );
    let map = one_file(&text);
    let def = text.find("$x").unwrap() as u32;
    let usage = text.rfind("$x").unwrap() as u32;
    let d = Diagnostic::error("undefined variable `$x`")
        .with_label(Span::new(usage, usage + 2), "used here")
        .with_secondary(Span::new(def, def + 2), "only defined in another probe");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:11:13: error: undefined variable `$x`
       |
    10 | BEGIN { $x = 1; }
       |         -- only defined in another probe
    11 | END { print($x); }
       |             ^^ used here
    ");
}

#[test]
fn distant_lines_are_elided() {
    let text = "a\nb\nc\nd\ne\n";
    let map = one_file(text);
    let d = Diagnostic::error("x")
        .with_label(Span::new(8, 9), "here")
        .with_secondary(Span::new(0, 1), "and here");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:5:1: error: x
      |
    1 | a
      | - and here
      ...
    5 | e
      | ^ here
    ");
}

#[test]
fn multi_line_span_underlines_to_end_of_first_line() {
    let map = one_file("BEGIN {\n  printf(\"a\n  b\");\n}");
    let d = Diagnostic::error("unterminated string").with_label(Span::new(17, 23), "starts here");
    insta::assert_snapshot!(render(&d, &map), @r#"
    script.bt:2:10: error: unterminated string
      |
    2 |   printf("a
      |          ^^ starts here
    "#);
}

#[test]
fn tabs_are_expanded_consistently() {
    let map = one_file("BEGIN {\n\t\t$x = 1 +;\n}");
    let d = Diagnostic::error("expected expression").with_label(Span::new(18, 19), "here");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:2:11: error: expected expression
      |
    2 |         $x = 1 +;
      |                 ^ here
    ");
}

#[test]
fn zero_width_span_and_eof() {
    let map = one_file("BEGIN { print(1)");
    let d = Diagnostic::error("expected `}`").with_label(Span::new(16, 16), "here");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:1:17: error: expected `}`
      |
    1 | BEGIN { print(1)
      |                 ^ here
    ");
    let map = one_file("");
    let d = Diagnostic::error("empty script").with_label(Span::new(0, 0), "");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:1:1: error: empty script
      |
    1 |
      | ^
    ");
}

#[test]
fn second_file_and_render_all() {
    let mut map = SourceMap::new();
    map.add("main.bt", "import \"lib.bt\";\n");
    let lib = map.add("lib.bt", "macro m { oops }\n");
    let base = map.file(lib).base;
    let mut diags = Diagnostics::new();
    diags.push(Diagnostic::warning("late").with_label(Span::new(base + 10, base + 14), "w"));
    diags.push(Diagnostic::error("early").with_label(Span::new(7, 15), "e"));
    diags.sort_by_position();
    assert!(diags.has_errors());
    assert_eq!(diags.error_count(), 1);
    insta::assert_snapshot!(render_all(&diags, &map), @r#"
    main.bt:1:8: error: early
      |
    1 | import "lib.bt";
      |        ^^^^^^^^ e

    lib.bt:1:11: warning: late
      |
    1 | macro m { oops }
      |           ^^^^ w
    "#);
}

#[test]
fn diagnostics_collection() {
    let mut diags: Diagnostics = vec![Diagnostic::warning("w")].into_iter().collect();
    assert!(!diags.has_errors());
    diags.extend([Diagnostic::error("e")]);
    assert!(diags.has_errors());
    assert_eq!(diags.iter().count(), 2);
    assert_eq!(diags.len(), 2);
    let d = Diagnostic::error("e").with_secondary(Span::new(3, 4), "s");
    assert_eq!(d.primary_span(), Some(Span::new(3, 4)));
}
