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
