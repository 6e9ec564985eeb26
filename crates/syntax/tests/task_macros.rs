//! bpftrace's task macros (`ppid`, `pcomm`, `leader_tid`, `leader_comm`)
//! become the member reads they stand for, with or without a task; a
//! script's own macro of the name wins.

use syntax::{parse_text, print_ast};

fn ast(src: &str) -> String {
    let (program, diags) = parse_text(src, 0);
    assert!(diags.is_empty(), "{diags:?}");
    print_ast(&program)
}

#[test]
fn each_is_a_read_of_two_members() {
    let printed = ast("BEGIN { $a = ppid; $b = pcomm($t); $c = leader_tid(); $d = leader_comm; }");
    for reads in [
        "Field ->pid\n          Field ->real_parent\n            Ident curtask",
        "Field ->comm\n          Field ->real_parent\n            Var $t",
        "Field ->pid\n          Field ->group_leader\n            Ident curtask",
        "Field ->comm\n          Field ->group_leader\n            Ident curtask",
    ] {
        assert!(printed.contains(reads), "no\n{reads}\nin\n{printed}");
    }
}

#[test]
fn a_script_macro_of_the_name_wins_and_other_calls_stay() {
    let printed =
        ast("macro pcomm() { \"mine\" } BEGIN { $a = pcomm; $b = str(ppid, 2); $c = ppid(1, 2); }");
    assert!(printed.contains("Str \"mine\""), "{printed}");
    assert!(!printed.contains("Field ->comm"), "{printed}");
    // `str`'s arguments are left alone; two arguments are not the macro.
    assert!(printed.contains("Call str"), "{printed}");
    assert!(printed.contains("Call ppid"), "{printed}");
}
