//! `config().KEY` (and `__builtin_config.KEY`, `config.KEY`) becomes the
//! literal of the run's setting; an unknown key is reported once.

use syntax::{ConfigLiteral, parse_text, print_ast, substitute_config};

fn settings(key: &str) -> Option<ConfigLiteral> {
    match key {
        "max_strlen" => Some(ConfigLiteral::Int(64)),
        "stack_mode" => Some(ConfigLiteral::Str("perf".into())),
        "cpp_demangle" => Some(ConfigLiteral::Bool(true)),
        _ => None,
    }
}

#[test]
fn each_form_becomes_the_setting() {
    let (mut program, diags) = parse_text(
        "BEGIN { $t = (config().max_strlen, __builtin_config.stack_mode, config.cpp_demangle, $x.max_strlen); }",
        0,
    );
    assert!(diags.is_empty(), "{diags:?}");
    let found = substitute_config(&mut program, &settings);
    assert!(found.is_empty(), "{found:?}");
    let ast = print_ast(&program);
    assert!(
        ast.ends_with("        Tuple\n          Int 64\n          Str \"perf\"\n          Bool true\n          Field .max_strlen\n            Var $x\n"),
        "{ast}"
    );
}

#[test]
fn a_name_that_is_no_key_is_reported() {
    let (mut program, _) = parse_text(
        "BEGIN { print(config().nope); print(config(1).max_strlen); }",
        0,
    );
    let found = substitute_config(&mut program, &settings);
    let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages, ["config() has no field `nope`"]);
    // `config(1)` is not the record: left for the checker.
    assert!(print_ast(&program).contains("Call config"));
}
