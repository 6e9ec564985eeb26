//! Small lowering snapshots, one construct each: the disassembly weft
//! generates for a script (as `weft -d bpf` prints it). Bless with
//! `INSTA_UPDATE=always cargo test -p codegen --test lower` and read the diff.

mod common;

use common::lower;

macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), lower($src), $src);
        }
    };
}

case!(
    keyless_count,
    "tracepoint:syscalls:sys_enter_getppid { @ = count(); }"
);
case!(
    count_by_tid,
    "tracepoint:syscalls:sys_enter_getppid { @[tid] = count(); }"
);
case!(
    hist_of_field,
    "tracepoint:syscalls:sys_exit_read { @ = hist(args->ret); }"
);
case!(
    predicate_on_pid,
    "tracepoint:syscalls:sys_enter_getppid /pid == 42/ { @ = count(); }"
);
case!(
    printf_int_and_string,
    r#"tracepoint:syscalls:sys_enter_openat { printf("%d %s\n", pid, str(args->filename)); }"#
);
// Two long strings, the second a variable's: each sent at its length
// after the fixed part (the helper's count for `str()`, a counting copy
// for the variable), the record at the sum.
case!(
    printf_sends_long_strings_at_their_length,
    r#"tracepoint:syscalls:sys_enter_openat { $s = str(args->filename); printf("%s %s %s\n", str(args->filename), comm, $s); }"#
);

/// The record of `printf` with long strings: `comm` (16 bytes) keeps its
/// place, each `str()` (1024 bytes) is a 4-byte length in the fixed part and
/// its bytes after it; the largest record holds both in full.
#[test]
fn long_strings_are_laid_out_after_the_fixed_part() {
    let c = common::compile_on(
        r#"tracepoint:syscalls:sys_enter_openat { printf("%s %d %s %s\n", str(args->filename), pid, comm, str(args->filename)); }"#,
        &ktypes::FixtureKernel::typical(),
    );
    let spec = &c.manifest.printfs[0];
    let layout: Vec<(u32, bool)> = spec.args.iter().map(|a| (a.field.offset, a.tail)).collect();
    assert_eq!(layout, [(8, true), (16, false), (24, false), (40, true)]);
    assert_eq!(spec.fixed_size, 48);
    assert_eq!(spec.size, 48 + 2 * 1024);
    // A string of `max_strlen` = 64 keeps its place, as before.
    let c = common::compile_on(
        r#"config = { max_strlen = 64 } tracepoint:syscalls:sys_enter_openat { printf("%s\n", str(args->filename)); }"#,
        &ktypes::FixtureKernel::typical(),
    );
    let spec = &c.manifest.printfs[0];
    assert!(!spec.args[0].tail);
    assert_eq!((spec.fixed_size, spec.size), (72, 72));
}

// A `str()` only compared is read without zeroing its 1 KiB first.
case!(
    str_compared_with_a_literal_is_not_zeroed,
    r#"tracepoint:syscalls:sys_enter_openat /str(args->filename) == "/dev/null"/ { @ = count(); }"#
);
// The haystack copied and counted by one helper, the needle's length by
// another, the starts tried by bpf_loop's callback (no loop over 1 KiB).
case!(
    strcontains_tries_the_starts_with_bpf_loop,
    r#"tracepoint:syscalls:sys_enter_openat { @ = strcontains(str(args->filename), "null"); }"#
);
case!(
    string_compare_with_literal,
    r#"tracepoint:syscalls:sys_enter_getppid /comm == "bash"/ { @ = count(); }"#
);
case!(
    store_and_delete,
    "tracepoint:syscalls:sys_enter_read { @s[tid] = nsecs; } tracepoint:syscalls:sys_exit_read { delete(@s[tid]); }"
);
case!(
    scratch_variable_loop,
    "BEGIN { $i = 0; while ($i < 4) { $i++; } @ = $i; }"
);
case!(
    for_over_a_range,
    "BEGIN { $s = 0; for ($i : 1..5) { if ($i == 2) { continue; } if ($i == 4) { return; } $s += $i; } @ = $s; }"
);
case!(
    min_read_merges_the_cpus,
    "tracepoint:syscalls:sys_enter_getppid { @m = min(pid); if (@m > 5) { @x = 1; } }"
);
case!(
    exit_stops_probes_that_fire_after_it,
    "tracepoint:syscalls:sys_enter_getppid { @n = count(); exit(); }"
);
// The body is a callback subprogram (`BEGIN_for1`, after the program as the
// loader joins them): `$kv` filled from the key and value pointers (R2, R3),
// the probe's variables reached through the context pointer (R4), `break`
// returning 1, `return` setting the context's stop word the caller checks.
case!(
    for_over_a_map,
    "BEGIN { @m[1, 2] = 3; $n = 0; for ($kv : @m) { $n += $kv.1; if ($kv.0.0 == 5) { break; } if ($kv.1 == 4) { return; } } @n = $n; }"
);
case!(ternary_and_logic, "BEGIN { @ = (1 < 2 && 3 > 4) ? 5 : 6; }");
case!(
    deleted_keyless_hist_stays_a_hash,
    "tracepoint:syscalls:sys_exit_read { @ = hist(args->ret); delete(@); }"
);
case!(
    branches_on_logical_predicate,
    "tracepoint:syscalls:sys_enter_getppid /pid == 42 || !(tid < 7 && cpu != 1)/ { @ = count(); }"
);
case!(
    pointer_arithmetic_scales_by_the_pointee,
    "BEGIN { $p = (int32 *)0x32; $q = $p + 3; $p++; @p = (uint64 *)0x40; @p -= 2; }"
);
case!(
    pointer_index_reads_the_element,
    "BEGIN { $p = (int16 *)0x32; $i = 5; @a = $p[2]; @b = $p[$i]; }"
);
case!(
    array_member_element_reads_only_the_element,
    "struct A { int32_t x[4]; } BEGIN { $a = (struct A *)0x100; $i = 2; @a = $a.x[1]; @b = $a.x[$i]; }"
);
case!(
    array_value_is_copied_and_indexed_in_place,
    "BEGIN { $b = (int8[8])0x0102030405060708; @a = $b[3]; @c = $b == $b; }"
);
case!(
    record_fields_are_stored_by_name,
    "BEGIN { $r = (a = 1, b = 2); $r = (b = 3, a = 4); @ = $r.b; }"
);
case!(
    address_of_a_variable,
    "BEGIN { $v = (uint64)7; $p = &$v; @ = *$p; }"
);
case!(
    len_and_has_key,
    "BEGIN { @a[1] = 1; @n = len(@a); @h = has_key(@a, 2); }"
);

/// `pid`, `tid` and the pid a user stack keeps, compiled for a weft running
/// in a nested pid namespace (dev 4, inode 4026532000): read through
/// `bpf_get_ns_current_pid_tgid`; `pid(init)`/`tid(init)` stay the kernel's.
#[test]
fn pid_and_tid_in_a_nested_pid_namespace() {
    let src = "tracepoint:syscalls:sys_enter_getppid { @[pid, tid(curr_ns), pid(init), tid(init)] = count(); @s[ustack(2)] = count(); }";
    let kernel = ktypes::FixtureKernel::typical().with_pid_namespace(4, 4026532000);
    let out = common::disasm(&common::compile_on(src, &kernel));
    insta::assert_snapshot!("pid_and_tid_in_a_nested_pid_namespace", out, src);
}
case!(
    pid_and_tid_in_the_initial_pid_namespace,
    "tracepoint:syscalls:sys_enter_getppid { @[pid, tid(curr_ns), pid(init), tid(init)] = count(); }"
);
case!(
    username_keeps_the_uid,
    "tracepoint:syscalls:sys_enter_getppid { @[username] = count(); }"
);
case!(
    len_of_a_user_stack,
    "tracepoint:syscalls:sys_enter_getppid { @ = len(ustack(3)); }"
);
case!(
    debugf_with_three_arguments_is_trace_printk,
    r#"tracepoint:syscalls:sys_enter_getppid { debugf("%s %d %x", comm, pid, 16); }"#
);
case!(
    debugf_with_four_arguments_is_trace_vprintk,
    r#"tracepoint:syscalls:sys_enter_getppid { debugf("%d %d %d %d", 1, 2, 3, 4); }"#
);
// The file pointer is loaded straight from the context (trusted), checked
// against NULL, and `f_path`'s offset added: what bpf_d_path takes.
case!(
    path_of_a_fentry_argument,
    "fentry:vfs_read { @[path(args.file->f_path, 32)] = count(); }"
);
case!(
    bitfield_reads_its_bytes_and_keeps_its_bits,
    "struct Foo { unsigned int a:4, b:8; } tracepoint:syscalls:sys_enter_read { $f = (struct Foo *)args->buf; @ = $f.b; }"
);
