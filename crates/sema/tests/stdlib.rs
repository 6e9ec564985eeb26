//! bpftrace's standard-library builtins (issue 14): `errorf`/`warnf`,
//! `exit(code)`, a probe's `return value`, a format a macro gives, and the
//! rest of that family. Accepted programs show their types; rejected ones
//! the rendered diagnostics.

#[macro_use]
mod common;

case!(
    errorf_and_warnf_format_as_printf,
    r#"BEGIN { errorf("bad %d %s", 10, "x"); warnf("careful\n"); }"#
);
case!(
    errorf_checks_its_arguments_as_printf,
    r#"BEGIN { errorf("bad %d", "x"); warnf("%s %s", comm); errorf(comm); }"#
);
case!(
    a_macro_that_gives_a_literal_is_a_format,
    r#"macro fmt() { "hi %d\n" } BEGIN { printf(fmt(), 1); errorf(fmt(), 2); }"#
);
case!(
    exit_takes_an_integer_code,
    "BEGIN { exit(69); } END { $c = 3; exit($c + 1); }"
);
case!(
    exit_code_must_be_one_integer,
    r#"BEGIN { exit("no"); } END { exit(1, 2); }"#
);
case!(
    a_probe_returns_an_integer,
    "BEGIN { $a = 1; return $a; } END { return; }"
);
case!(a_probe_cannot_return_a_string, r#"BEGIN { return "x"; }"#);
case!(
    strerror_and_signal_name_are_names_of_numbers,
    "tracepoint:syscalls:sys_exit_openat { @e[strerror(-args->ret)] = count(); $s = signal_name(2); @v = $s; printf(\"%s %s\\n\", $s, strerror(1)); }"
);
case!(
    strerror_and_signal_name_take_one_integer,
    r#"BEGIN { print(strerror("x")); print(signal_name()); $a = strerror(1) == "y"; }"#
);
case!(
    assert_takes_a_condition_and_a_string,
    r#"BEGIN { assert(1 == 2, "no"); $m = "why"; assert(pid, $m); }"#
);
case!(
    assert_arguments_are_checked,
    r#"BEGIN { assert("x", "m"); assert(1, 2); assert(1); }"#
);
case!(
    probetype_is_a_string_in_every_form,
    "BEGIN { @a = probetype; @b = probetype(); @c = __builtin_probetype; }"
);
case!(
    pid_and_tid_take_a_pid_namespace,
    "BEGIN { @a = pid(curr_ns); @b = pid(init); @c = tid(curr_ns) + tid(init) + pid() + tid() + pid + tid; }"
);
case!(
    pid_namespace_is_curr_ns_or_init,
    "BEGIN { @a = pid(inti); @b = tid(1); @c = pid(init, curr_ns); }"
);
case!(
    username_is_a_uid_printed_as_a_name,
    r#"BEGIN { @[username] = count(); @u = username(); printf("%s\n", username); $n = username == "root"; }"#
);
case!(
    len_of_a_stack_made_in_the_probe,
    "tracepoint:syscalls:sys_enter_getppid { $s = ustack(3); @a = len($s); @b = len(kstack); @c = len(ustack(perf, 4)); }"
);
case!(
    len_of_a_stack_kept_in_a_map_is_refused,
    "tracepoint:syscalls:sys_enter_getppid { @s[1] = ustack(3); } tracepoint:syscalls:sys_exit_getppid { @n = len(@s[1]); }"
);
case!(
    debugf_is_warned_about_and_takes_kernel_conversions,
    r#"BEGIN { debugf("a %d %s %llx %p", 1, "x", 2, 3); debugf("plain"); }"#
);
case!(
    debugf_refuses_what_the_kernel_cannot_format,
    r#"BEGIN { debugf("%c %d", 1, 2); debugf("%s", 1); debugf("%d", "x"); debugf(comm); debugf("%d %d %d %d %d %d %d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13); }"#
);
case!(
    path_outside_fentry_and_iter_is_refused,
    "tracepoint:syscalls:sys_enter_getppid { $p = (struct path *)0; print(path($p)); print(path($p, 0)); print(path(1)); }"
);
case!(
    uptr_and_kptr_keep_the_pointer_type,
    "tracepoint:syscalls:sys_enter_openat { $f = uptr(args->filename); $t = kptr(curtask); $n = uptr(0x1000); print(kptr(\"x\")); }"
);
