//! Macro expansion: each call becomes a block holding a copy of the body,
//! parameters replaced and the body's own variables renamed. A snapshot is
//! the script, then the expanded probes (macro definitions left out), or the
//! rendered diagnostics.

use source::SourceMap;
use syntax::ast::{Item, Program};

fn expand(src: &str) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, diags) = syntax::parse(map.file(id));
    if !diags.is_empty() {
        return format!("{src}\n---\n{}", source::render_all(&diags, &map));
    }
    let probes = Program {
        items: program
            .items
            .into_iter()
            .filter(|i| !matches!(i, Item::Macro(_)))
            .collect(),
        ..program
    };
    format!("{src}\n---\n{}", syntax::print_ast(&probes))
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::with_settings!({ snapshot_path => "snapshots/expand", prepend_module_to_snapshot => false }, {
                insta::assert_snapshot!(stringify!($name), expand($src));
            });
        }
    };
}

case!(
    variable_and_map_parameters_are_the_callers,
    "macro inc($x, @m) { $x += 1; @m[$x] = 1; } BEGIN { $a = 1; inc($a, @hits); }"
);
case!(
    expression_parameter_is_copied_at_each_use,
    "macro twice(x) { x; x } BEGIN { twice(printf(\"hi\")); }"
);
case!(
    body_variables_are_renamed,
    "macro inc(x) { let $y = x + 1; $y } BEGIN { $y = 2; $z = inc($y); }"
);
case!(
    macros_call_macros_in_any_order,
    "macro add2(x) { x + add1(x) } macro add1(x) { x + 1 } BEGIN { @ = add2(1); }"
);
case!(
    bare_name_expands_a_macro_without_parameters,
    "macro one { 1 } macro two() { one + one } BEGIN { @ = two; @b = one!(); }"
);
case!(
    parameter_names_win_over_macros,
    "macro add() { 2 } macro ident(add) { add } BEGIN { @ = ident(1); }"
);
case!(
    overloads_are_chosen_by_argument_kind,
    "macro f($x) { $x = 1; } macro f(x) { printf(\"%d\", x); } BEGIN { $a = 0; f($a); f(1 + 1); }"
);
case!(
    a_call_of_another_arity_stays_a_builtin_call,
    "macro cpu(x) { x } BEGIN { @a = cpu(\"hi\"); @b = cpu(); }"
);
case!(
    typeof_arguments_are_types_in_the_body,
    "macro sz(t) { sizeof(t) + sizeof(t*) + sizeof(t[2]) } macro cast(t, v) { (t*)v } BEGIN { @ = sz(typeof(uint32)); @p = cast(typeof(uint8), 1); }"
);
case!(
    typeof_of_an_expression_types_a_let,
    "macro zero(x) { let $v: typeof(x); $v } BEGIN { @ = zero(5); }"
);
case!(
    for_and_let_variables_are_renamed,
    "macro first(@m) { let $k; for ($kv : @m) { $k = $kv.0; break; } $k } BEGIN { @a[1] = 2; @f = first(@a); }"
);

// Errors.
case!(
    err_variable_parameter_needs_a_variable,
    "macro inc($x) { $x += 1; } BEGIN { inc(1 + 1); inc(@m); }"
);
case!(
    err_map_parameter_needs_a_map,
    "macro set(@m) { @m = 1; } BEGIN { set($x); set(@m[1]); }"
);
case!(
    err_map_not_passed_in,
    "macro bump() { @x++; }\nBEGIN { bump(); }"
);
case!(
    err_recursive_macros,
    "macro a(x) { b(x) }\nmacro b(x) { a(x) + 1 }\nBEGIN { @ = a(1); }"
);
case!(
    err_expansion_too_large,
    "macro t(x) { x + x + x + x + x + x + x + x }\nBEGIN { @ = t(t(t(t(t(t(t(t(1)))))))); }"
);

case!(
    err_defined_twice,
    "macro m(x) { x }\nmacro m(y) { y + 1 }\nBEGIN { @ = m(1); }"
);
case!(
    err_in_nested_expansion_names_each_call,
    "macro inner() { @missing = 1; }\nmacro outer() { inner(); }\nBEGIN {\n  outer();\n}"
);
