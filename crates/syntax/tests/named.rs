//! Named program parameters: each `getopt()` becomes the literal its
//! `--name[=value]` gives (or its default), typed by the default; values
//! that do not read, and calls that are not literals, are reported.

use syntax::{NamedParam, parse_text, print_ast, substitute_named};

fn given(args: &[&str]) -> Vec<NamedParam> {
    args.iter()
        .map(|a| NamedParam::parse(a).expect("an option"))
        .collect()
}

/// The program after substitution, printed, with what the pass found.
fn substituted(src: &str, args: &[&str]) -> (String, syntax::NamedOutcome, Vec<String>) {
    let (mut program, diags) = parse_text(src, 0);
    assert!(diags.is_empty(), "{diags:?}");
    let (outcome, diags) = substitute_named(&mut program, &given(args));
    let messages = diags.iter().map(|d| d.message.clone()).collect();
    (print_ast(&program), outcome, messages)
}

#[test]
fn options_parse_with_and_without_values() {
    assert_eq!(
        NamedParam::parse("--aa=1=2"),
        Some(NamedParam {
            name: "aa".into(),
            value: Some("1=2".into())
        })
    );
    assert_eq!(
        NamedParam::parse("--dd"),
        Some(NamedParam {
            name: "dd".into(),
            value: None
        })
    );
    for not_option in ["--", "-x", "pos", "5"] {
        assert_eq!(NamedParam::parse(not_option), None, "{not_option}");
    }
}

#[test]
fn each_getopt_becomes_its_value_or_default() {
    let src = r#"BEGIN { $t = (getopt("aa", 20), getopt("bb", -1), getopt("cc", true), getopt("dd"), getopt("ee", "hello"), getopt("ff", 3)); }"#;
    let (ast, outcome, diags) = substituted(
        src,
        &[
            "--dd",
            "--aa=0xffffffffffffffff",
            "--bb=-10",
            "--cc=OFF",
            "--ee=bye",
        ],
    );
    assert!(diags.is_empty(), "{diags:?}");
    assert!(outcome.invalid.is_empty(), "{:?}", outcome.invalid);
    assert!(!ast.contains("getopt"), "{ast}");
    let tuple = "        Tuple\n          Int 18446744073709551615\n          Unary -\n            Int 10\n          Bool false\n          Bool true\n          Str \"bye\"\n          Int 3\n";
    assert!(ast.ends_with(tuple), "{ast}");
    let names: Vec<&String> = outcome.expected.keys().collect();
    assert_eq!(names, ["aa", "bb", "cc", "dd", "ee", "ff"]);
}

#[test]
fn values_that_do_not_read_as_the_type_are_reported() {
    let src = r#"BEGIN { $t = (getopt("n", 10), getopt("b", false), getopt("s", "x"), getopt("u", 1), getopt("m", 1)); }"#;
    let (_, outcome, _) = substituted(src, &["--n=False", "--b=maybe", "--s", "--u=-4", "--m"]);
    assert_eq!(
        outcome.invalid,
        [
            "program command line option --n invalid integer (value: False)",
            "program command line option --b expects a boolean (e.g. 'true') (value: maybe)",
            "program command line option --s expects a string (value: true)",
            "program command line option --u invalid integer (value: -4)",
            "program command line option --m expects an integer (value: true)",
        ]
    );
}

#[test]
fn the_hint_lists_the_options_with_descriptions_for_help() {
    let src =
        r#"BEGIN { $t = (getopt("bb", 1), getopt("aa", 10, "Description of aa"), getopt("cc")); }"#;
    let (_, outcome, _) = substituted(src, &["--zz", "--help", "--aa=1"]);
    assert_eq!(
        outcome.unexpected(&given(&["--zz", "--help", "--aa=1"])),
        ["zz"]
    );
    assert_eq!(
        outcome.hint(false),
        "expected program options: --aa, --bb, --cc"
    );
    assert_eq!(
        outcome.hint(true),
        "expected program options:\n--aa: Description of aa\n--bb\n--cc"
    );
    let (_, none, _) = substituted("BEGIN { }", &[]);
    assert_eq!(none.hint(true), "no custom program options defined.");
}

#[test]
fn calls_that_are_not_literals_are_reported_once() {
    let src = r#"BEGIN { $n = "x"; $a = getopt($n); $b = getopt("b", $n); $c = getopt("c", 1, comm); $d = getopt("d", 1, "e", 2); }"#;
    let (ast, _, diags) = substituted(src, &[]);
    assert_eq!(
        diags,
        [
            "getopt() takes the option's name as a string literal first",
            "getopt()'s default must be an integer, string or bool literal",
            "getopt()'s description must be a string literal",
            "getopt() takes a name, a default and a description, at most",
        ]
    );
    assert!(!ast.contains("getopt"), "{ast}");
}
