//! Issue 22: bpftrace's current tools and documented examples, checked
//! against a fixture kernel. Each case is a script of our own with the
//! construct a tool or an example of the current release uses; the
//! snapshot shows its types, or its diagnostics.

#[macro_use]
mod common;

case!(
    a_map_fed_pointers_that_differ_only_by_const_keeps_its_pointer_type,
    "tracepoint:syscalls:sys_enter_openat { @p[tid] = args.filename; } tracepoint:syscalls:sys_enter_read { @p[tid] = args.buf; } tracepoint:syscalls:sys_exit_read { $s = str(@p[tid]); }"
);
case!(
    func_shares_a_map_with_ksym,
    "kprobe:vfs_read { @name[tid] = func; } kretprobe:vfs_read { @name[0] = ksym(0); printf(\"%s\\n\", @name[tid]); }"
);
case!(
    syscall_name_is_a_name_of_a_number,
    "tracepoint:raw_syscalls:sys_enter { @[syscall_name(args.id)] = count(); $n = syscall_name(0); printf(\"%s\\n\", $n); }"
);
case!(
    syscall_name_takes_one_integer,
    "BEGIN { print(syscall_name(\"read\")); print(syscall_name()); }"
);
case!(
    find_gives_the_value_to_a_variable,
    "BEGIN { @m[2] = (1, \"hello\"); let $val; if (find(@m, 2, $val)) { print($val); } $found = find(@m, 3, $other); }"
);
case!(
    find_needs_a_keyed_map_and_a_variable,
    "BEGIN { @s = 1; @m[1] = 2; @c[1] = count(); $a = find(@s, 1, $x); $b = find(@m, 1, @y); $c = find(@c, 1, $z); $d = find(@m, 1); }"
);
case!(
    fail_reached_is_the_scripts_error,
    "BEGIN { if (1 < 2) { fail(\"want %d, got %s%c\", -5, \"x\", 33); } }"
);
case!(
    fail_in_a_branch_never_taken_says_nothing,
    "BEGIN { if (2 < 1) { fail(\"never\"); } else { @a = 1; } if (1) { @b = 1; } else { fail(\"nor this\"); } }"
);
case!(
    fail_needs_literals,
    "BEGIN { fail(\"pid %d\", pid); fail(comm); fail(); }"
);
case!(
    an_unknown_function_of_a_map_is_one_error,
    "BEGIN { @map[2] = 1; $v = fnd(@map, 2); }"
);
case!(
    a_map_with_and_without_a_key_says_so,
    "BEGIN { @x = 1; @x[1] = 2; @y[1] = 1; @y = 2; }"
);
case!(
    a_kernel_enumerator_keeps_its_enum_type,
    "enum custom { CUSTOM_ENUM = 3 }; BEGIN { $r = WEFT_BELOW_ZERO; printf(\"%d, %s, %s\\n\", $r, $r, CUSTOM_ENUM); @anon = TCP_FIN_WAIT1; @sum = WEFT_BELOW_ZERO + 1; $size = sizeof(WEFT_BELOW_ZERO); }"
);

/// Every diagnostic of `src`, warnings too (the shared harness shows
/// types when there is no error).
fn diagnostics(src: &str) -> String {
    use sema::{CheckOptions, check};
    use source::{SourceMap, render_all};
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) = syntax::parse(map.file(id));
    let kernel = ktypes::FixtureKernel::typical();
    let (_, sema_diags) = check(&program, &kernel, &CheckOptions::default());
    diags.extend(sema_diags.iter().cloned());
    render_all(diags.iter(), &map)
}

macro_rules! warnings {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), diagnostics($src), $src);
        }
    };
}

warnings!(
    a_discarded_value_is_warned_of,
    "BEGIN { @a[1] = 1; { 1 } has_key(@a, 1); _ = has_key(@a, 1); $b = has_key(@a, 1); delete(@a, 2); @a[1]++; print(1); }"
);
warnings!(
    a_value_of_the_other_sign_is_warned_of,
    "BEGIN { $c = (uint64)1; $d = (int64)-1; $c = $d; $e = (uint32)1; $e = $d; $f = 1; $f = (uint64)5; let $g: uint16 = 1; $h = -1; let $i: uint16 = $h; let $j: int64 = $e; }"
);
case!(
    a_pinned_iterator_is_one_sentence,
    "iter:task:/sys/fs/bpf/tasks { printf(\"%d\\n\", ctx.task.pid); }"
);
case!(
    a_misspelt_tracepoint_category_suggests_the_category,
    "tracepoint:sycalls:sys_enter_openat { } tracepoint:syscalls:sys_enter_opnat { }"
);
case!(
    a_function_named_without_a_call_suggests_the_call,
    "BEGIN { exit; $n = strerror; }"
);
warnings!(
    arithmetic_with_a_literal_decides_no_sign,
    "BEGIN { $len = (uint64)5; $len = ($len > 0) ? ($len - 1) : 0; $n = (uint64)1; $n = $n + 1; }"
);
case!(
    is_err_is_a_bool_of_a_pointer,
    "kretprobe:vfs_read { @e[is_err(retval)] = count(); $p = (struct file *)retval; $b = is_err($p); } kprobe:vfs_read { $c = is_err(\"x\"); }"
);
case!(
    write_user_takes_a_value_and_a_literal_length_that_fits,
    "tracepoint:syscalls:sys_enter_openat { $p = \"/tmp/x\"; $a = write_user(args.filename, $p, 7); $b = write_user(args.filename, $p, 8); $c = write_user(args.filename, $p, $a); }"
);
