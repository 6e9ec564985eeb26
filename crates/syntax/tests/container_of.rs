//! bpftrace's `container_of(ptr, typeof(T), member)` becomes the pointer
//! arithmetic it stands for; a script's own macro of the name wins, and a
//! call of another shape stays a call (which the checker reports).

use syntax::{parse_text, print_ast};

fn ast(src: &str) -> String {
    let (program, diags) = parse_text(src, 0);
    assert!(diags.is_empty(), "{diags:?}");
    print_ast(&program)
}

#[test]
fn a_cast_of_the_pointer_moved_back_by_the_member_offset() {
    let printed = ast("BEGIN { $p = container_of($n, typeof(struct Foo), b.c); }");
    assert!(!printed.contains("Call container_of"), "{printed}");
    let expected = "Cast (struct Foo *)\n          Binary -\n            Cast (void *)\n              Var $n\n            Offsetof b.c\n              Type struct Foo\n";
    assert!(printed.contains(expected), "{printed}");
}

#[test]
fn a_script_macro_of_the_name_wins_and_other_shapes_stay_calls() {
    let printed = ast("macro container_of(a, b, c) { 7 } BEGIN { $a = container_of(1, 2, 3); }");
    assert!(printed.contains("Int 7"), "{printed}");
    let printed =
        ast("BEGIN { $a = container_of($p, 2, m); $b = container_of($p, typeof(struct S)); }");
    assert_eq!(printed.matches("Call container_of").count(), 2, "{printed}");
}
