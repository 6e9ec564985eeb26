//! Rendering of diagnostics against a source map.

use source::{Code, Diagnostic, Diagnostics, SourceMap, Span, render, render_all};

fn one_file(text: &str) -> SourceMap {
    let mut map = SourceMap::new();
    map.add("script.bt", text);
    map
}

#[test]
fn primary_label_help_note_and_code() {
    let map = one_file("kprobe:f { foo(); }");
    let d = Diagnostic::error("unknown function 'foo'")
        .with_code(Code::E0203)
        .with_label(Span::new(11, 14), "not a function")
        .with_help("did you mean 'print'?")
        .with_note("functions are listed by `weft --list-functions`");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:1:12-15: ERROR: unknown function 'foo'
    kprobe:f { foo(); }
               ~~~ not a function
    HINT: did you mean 'print'?
    NOTE: functions are listed by `weft --list-functions`
    CODE: E0203
    ");
}

/// bpftrace's own rendering, line for line (its `kaddr` failure): the place
/// `LINE:COL-ENDCOL` with an exclusive end, the source line, `~` under the span.
#[test]
fn unlabelled_span_is_exactly_bpftraces_form() {
    let text = r#"begin { print(kaddr("asdfzzzzzzz")) }"#;
    let map = {
        let mut map = SourceMap::new();
        map.add("stdin", text);
        map
    };
    let start = text.find("kaddr").unwrap() as u32;
    let d = Diagnostic::error("Failed to resolve kernel symbol: asdfzzzzzzz")
        .with_label(Span::new(start, start + 20), "");
    assert_eq!(
        render(&d, &map),
        "stdin:1:15-35: ERROR: Failed to resolve kernel symbol: asdfzzzzzzz\n\
         begin { print(kaddr(\"asdfzzzzzzz\")) }\n              ~~~~~~~~~~~~~~~~~~~~\n"
    );
}

/// What bpftrace reports only when it attaches has no place in its first
/// line; weft still shows where.
#[test]
fn bare_header_keeps_the_excerpt() {
    let map = one_file("uprobe:/bin/bash:10 { }");
    let d = Diagnostic::error("Could not resolve address: /bin/bash:0xa")
        .with_bare_header()
        .with_label(Span::new(0, 19), "in no function");
    insta::assert_snapshot!(render(&d, &map), @r"
    ERROR: Could not resolve address: /bin/bash:0xa
    uprobe:/bin/bash:10 { }
    ~~~~~~~~~~~~~~~~~~~ in no function
    ");
}

#[test]
fn no_place_is_bpftraces_bare_form() {
    let map = SourceMap::new();
    let d = Diagnostic::error("no probes in script").with_help("add `BEGIN { }`");
    insta::assert_snapshot!(render(&d, &map), @r"
    ERROR: no probes in script
    HINT: add `BEGIN { }`
    ");
}

#[test]
fn warning_without_code() {
    let map = one_file("BEGIN { 1 }");
    let d = Diagnostic::warning("unused value").with_label(Span::new(8, 9), "");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:1:9-10: WARNING: unused value
    BEGIN { 1 }
            ~
    ");
}

#[test]
fn secondary_labels_on_their_own_lines() {
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
    script.bt:11:13-15: ERROR: undefined variable `$x`
    BEGIN { $x = 1; }
            -- only defined in another probe
    END { print($x); }
                ~~ used here
    ");
}

#[test]
fn two_labels_on_one_line_share_it() {
    let map = one_file("BEGIN { @a = 1; @a[1] = 2; }");
    let d = Diagnostic::error("key mismatch")
        .with_label(Span::new(16, 21), "keyed here")
        .with_secondary(Span::new(8, 10), "not keyed here");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:1:17-22: ERROR: key mismatch
    BEGIN { @a = 1; @a[1] = 2; }
            -- not keyed here
                    ~~~~~ keyed here
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
    script.bt:5:1-2: ERROR: x
    a
    - and here
    ...
    e
    ~ here
    ");
}

/// The place names both lines, as bpftrace's does; the excerpt shows the
/// first line, underlined to its end.
#[test]
fn multi_line_span_underlines_to_end_of_first_line() {
    let map = one_file("BEGIN {\n  printf(\"a\n  b\");\n}");
    let d = Diagnostic::error("unterminated string").with_label(Span::new(17, 23), "starts here");
    insta::assert_snapshot!(render(&d, &map), @r#"
    script.bt:2-3: ERROR: unterminated string
      printf("a
             ~~ starts here
    "#);
}

/// A span that ends with its line's newline is on one line.
#[test]
fn span_taking_the_newline_stays_on_its_line() {
    let map = one_file("BEGIN { }\nEND { }\n");
    let d = Diagnostic::error("x").with_label(Span::new(0, 10), "");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:1:1-10: ERROR: x
    BEGIN { }
    ~~~~~~~~~
    ");
}

/// A tab is four spaces in the source line and four marks under it (as
/// bpftrace shows it); the column counts it as one character.
#[test]
fn tabs_are_four_columns() {
    let map = one_file("BEGIN {\n\t\t$x = 1 +;\n}");
    let d = Diagnostic::error("expected expression").with_label(Span::new(10, 19), "here");
    let out = render(&d, &map);
    assert_eq!(
        out,
        "script.bt:2:3-12: ERROR: expected expression\n        $x = 1 +;\n        ~~~~~~~~~ here\n"
    );
}

#[test]
fn zero_width_span_and_eof() {
    let map = one_file("BEGIN { print(1)");
    let d = Diagnostic::error("expected `}`").with_label(Span::new(16, 16), "here");
    insta::assert_snapshot!(render(&d, &map), @r"
    script.bt:1:17-18: ERROR: expected `}`
    BEGIN { print(1)
                    ~ here
    ");
    let map = one_file("");
    let d = Diagnostic::error("empty script").with_label(Span::new(0, 0), "");
    assert_eq!(
        render(&d, &map),
        "script.bt:1:1-2: ERROR: empty script\n\n~\n"
    );
}

/// Multi-byte characters count as one column, and a span ending inside the
/// text after one does not split it.
#[test]
fn columns_count_characters() {
    let map = one_file("BEGIN { printf(\"é\"); x }");
    let at = "BEGIN { printf(\"é\"); ".len() as u32;
    let d = Diagnostic::error("x").with_label(Span::new(at, at + 1), "");
    insta::assert_snapshot!(render(&d, &map), @r#"
    script.bt:1:22-23: ERROR: x
    BEGIN { printf("é"); x }
                         ~
    "#);
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
    main.bt:1:8-16: ERROR: early
    import "lib.bt";
           ~~~~~~~~ e

    lib.bt:1:11-15: WARNING: late
    macro m { oops }
              ~~~~ w
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
