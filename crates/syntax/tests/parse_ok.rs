//! Every construct of the language parses without diagnostics; the AST
//! print is snapshotted (`INSTA_UPDATE=always cargo test -p syntax` to bless).

mod common;

use source::SourceMap;

#[test]
fn ok_cases_parse_cleanly() {
    let mut failures = Vec::new();
    for (name, src) in common::OK_CASES {
        let mut map = SourceMap::new();
        let id = map.add("script.bt", *src);
        // As written: macro expansion has its own tests (`expand.rs`).
        let file = map.file(id);
        let (program, diags) = syntax::parse_unexpanded(&file.text, file.base);
        if !diags.is_empty() {
            failures.push(format!("{name}:\n{}", source::render_all(&diags, &map)));
            continue;
        }
        let snapshot = format!("{src}\n---\n{}", syntax::print_ast(&program));
        insta::with_settings!({ snapshot_path => "snapshots/ok", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(*name, snapshot);
        });
    }
    assert!(
        failures.is_empty(),
        "unexpected diagnostics:\n{}",
        failures.join("\n")
    );
}

#[test]
fn node_ids_are_dense_and_unique() {
    for (name, src) in common::OK_CASES {
        // Parsed, ids are dense; expanded, copies get new ids (the
        // templates keep theirs) and every id is still unique and below
        // `node_count`.
        for expanded in [false, true] {
            let (program, _) = if expanded {
                syntax::parse_text(src, 0)
            } else {
                syntax::parse_unexpanded(src, 0)
            };
            let text = format!("{program:?}");
            let mut seen = vec![false; program.node_count as usize];
            for piece in text.split("id: NodeId(").skip(1) {
                let n: usize = piece[..piece.find(')').unwrap()].parse().unwrap();
                assert!(!seen[n], "{name}: NodeId({n}) used twice");
                seen[n] = true;
            }
            if !expanded {
                assert!(seen.iter().all(|s| *s), "{name}: node ids not dense");
            }
        }
    }
}

#[test]
fn spans_point_at_the_source() {
    let src = "kprobe:vfs_read /pid == 1/ { @x[tid] = nsecs + 1; }";
    let (program, diags) = syntax::parse_text(src, 100);
    assert!(diags.is_empty());
    let snapshot = syntax::print_ast_with_spans(&program);
    insta::assert_snapshot!(snapshot, @r#"
    Program @100..151
      Probe @100..151
        AttachPoint kprobe:vfs_read provider="kprobe" parts=["vfs_read"] @100..115
        Predicate @117..125
          Binary == @117..125
            Ident pid @117..120
            Int 1 @124..125
        Block @127..151
          Assign = @129..148
            Map @x @129..136
              Ident tid @132..135
            Binary + @139..148
              Ident nsecs @139..144
              Int 1 @147..148
    "#);
}
