//! Positional parameters put in before checking: integers in every base
//! bpftrace reads, text in attach points, `str($N)` as a string literal.

use syntax::ast::{ExprKind, Item, StmtKind};
use syntax::{parse_text, positional_int, print_ast, substitute_positionals};

fn params(p: &[&str]) -> Vec<String> {
    p.iter().map(|s| s.to_string()).collect()
}

#[test]
fn integers_in_every_base() {
    assert_eq!(positional_int("123"), Some(123));
    assert_eq!(positional_int("0"), Some(0));
    assert_eq!(positional_int("0775"), Some(0o775));
    assert_eq!(positional_int("0x123"), Some(0x123));
    assert_eq!(positional_int("0XfF"), Some(255));
    assert_eq!(positional_int("0xffffffffffffffff"), Some(u64::MAX));
    assert_eq!(positional_int("-7"), Some((-7i64) as u64));
    assert_eq!(
        positional_int("-9223372036854775808"),
        Some(i64::MIN as u64)
    );
    for not_int in [
        "",
        "-",
        "0x",
        "09",
        "12a",
        "hello",
        "1.5",
        "18446744073709551616",
        "-9223372036854775809",
    ] {
        assert_eq!(positional_int(not_int), None, "{not_int:?}");
    }
}

#[test]
fn attach_points_take_the_text() {
    let (mut program, diags) = parse_text(
        "i:ms:$1 { } BEG$2 { } $3 { } tracepoint:syscalls:sys_enter_$4 { } i:s:$9 { }",
        0,
    );
    assert!(diags.is_empty());
    substitute_positionals(
        &mut program,
        &params(&["5", "IN", "interval:s:2", "getppid"]),
    );
    let points: Vec<(String, String, Vec<String>)> = program
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Probe(p) => Some(p.attach_points[0].clone()),
            _ => None,
        })
        .map(|ap| (ap.raw, ap.provider, ap.parts))
        .collect();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        points,
        vec![
            ("i:ms:5".into(), "i".into(), s(&["ms", "5"])),
            ("BEGIN".into(), "BEGIN".into(), s(&[])),
            ("interval:s:2".into(), "interval".into(), s(&["s", "2"])),
            (
                "tracepoint:syscalls:sys_enter_getppid".into(),
                "tracepoint".into(),
                s(&["syscalls", "sys_enter_getppid"])
            ),
            // A missing parameter is empty, as in bpftrace.
            ("i:s:".into(), "i".into(), s(&["s", ""])),
        ]
    );
}

#[test]
fn expressions_take_integers_and_str_takes_the_text() {
    let (mut program, diags) = parse_text(
        "BEGIN { unroll($1) { } @l = lhist(1, $2, $1, 1); @s = str($1); @t = str($3); @m = str($4); @n = $3; @neg = $5; @missing = $4; }",
        0,
    );
    assert!(diags.is_empty());
    let before = program.node_count;
    substitute_positionals(&mut program, &params(&["0x10", "0775", "text", "", "-3"]));
    let Item::Probe(p) = &program.items[0] else {
        panic!("a probe")
    };
    let StmtKind::Unroll { count, .. } = &p.body.stmts[0].kind else {
        panic!("unroll")
    };
    assert!(matches!(count.kind, ExprKind::Int { value: 16, .. }));
    let ast = print_ast(&program);
    for want in [
        "Int 509",
        "Str \"0x10\"",
        "Str \"text\"",
        "Str \"\"",
        "Positional $3",
        "Unary -",
        "Int 3",
    ] {
        assert!(ast.contains(want), "{want} missing in\n{ast}");
    }
    // `$4` is empty: not an integer, so it stays a parameter (zero).
    assert!(ast.contains("Positional $4"), "{ast}");
    // `-3` is `-(3)`: one new node.
    assert_eq!(program.node_count, before + 1);
}

#[test]
fn str_of_literals_and_string_offsets_fold_to_literals() {
    // As bpftrace folds them: `str($1)` is the parameter's text itself (so
    // `kaddr(str($1))` names a symbol), `str($2 + 1)` skips a byte, `str()`
    // of a number is its digits, a length cuts; `str(arg0)` stays a call.
    let (mut program, diags) = parse_text(
        r#"BEGIN { @k = kaddr(str($1)); @a = str($2 + 1); @b = str($2 + 9); @c = str(42); @d = str("abcdef", 2); @e = "xyz" + 1; @f = str(arg0); @g = str($3); }"#,
        0,
    );
    assert!(diags.is_empty());
    substitute_positionals(&mut program, &params(&["vfs_read", "hello", "7"]));
    let ast = print_ast(&program);
    for want in [
        "Call kaddr",
        "Str \"vfs_read\"",
        "Str \"ello\"",
        "Str \"\"",
        "Str \"42\"",
        "Str \"ab\"",
        "Str \"yz\"",
        "Call str",
        "Str \"7\"",
    ] {
        assert!(ast.contains(want), "{want} missing in\n{ast}");
    }
    // Only `str(arg0)` is left as a call of `str`.
    assert_eq!(ast.matches("Call str").count(), 1, "{ast}");
    assert!(!ast.contains("Positional"), "{ast}");
}
