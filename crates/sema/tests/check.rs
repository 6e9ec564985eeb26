//! Type checker: accepted programs show their inferred types; rejected ones
//! show the rendered diagnostics, caret and help included.

use ktypes::FixtureKernel;
use sema::{CheckOptions, check, print_types};
use source::{SourceMap, render_all};

fn run(src: &str) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) = syntax::parse(map.file(id));
    let opts = CheckOptions {
        positional: vec!["42".into(), "hello".into()],
        cpid: None,
        pid_filter: None,
        env: Vec::new(),
        ..CheckOptions::default()
    };
    let (typed, sema_diags) = check(&program, &FixtureKernel::typical(), &opts);
    diags.extend(sema_diags.iter().cloned());
    if diags.has_errors() {
        render_all(diags.iter(), &map)
    } else {
        print_types(&typed)
    }
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), run($src), $src);
        }
    };
}

// Accepted programs.
case!(
    ok_count_by_comm,
    "tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }"
);
case!(
    ok_latency_pattern,
    "tracepoint:syscalls:sys_enter_read { @start[tid] = nsecs; }\ntracepoint:syscalls:sys_exit_read /@start[tid]/ { @us = hist((nsecs - @start[tid]) / 1000); delete(@start[tid]); }"
);
case!(
    ok_map_read_before_assign,
    "tracepoint:syscalls:sys_exit_read /@start[tid]/ { delete(@start[tid]); }\ntracepoint:syscalls:sys_enter_read { @start[tid] = nsecs; }"
);
case!(
    ok_printf_args,
    r#"tracepoint:syscalls:sys_enter_openat { printf("%-6d %-16s %s\n", pid, comm, str(args->filename)); }"#
);
case!(
    ok_tuple_keys_and_aggs,
    "tracepoint:syscalls:sys_exit_read { @s[pid, comm] = sum(args->ret); @m = min(args->ret); @x = max(args->ret); @a = avg(args->ret); @st = stats(args->ret); @l = lhist(args->ret, 0, 100, 10); }"
);
case!(
    ok_wildcard_and_vars,
    "tracepoint:syscalls:sys_enter_* { $n = 1; $n += 2; $s = comm; if ($n > 2 && $s == \"bash\") { @[probe] = count(); } }"
);
case!(
    ok_string_widening,
    r#"BEGIN { @x["a"] = 1; @x[comm] = 2; @v = "ab"; @v = comm; exit(); }"#
);
case!(
    ok_positional,
    r#"BEGIN { printf("%d %s\n", $1, str($2)); @n = $#; }"#
);
// Issue 14, bug 4: literals, comparisons, `!` and `(bool)` are booleans; an
// integer joined with one stays an integer.
case!(
    ok_bool_types,
    r#"BEGIN { @a[true] = false; @b = 1 < 2; $x = (bool)5; @c = ($x, !$x); @d = $x + 1; @e = 1; @e = 2 > 1; @f = sum(3 == 3); }"#
);
case!(
    ok_interval_and_print,
    "interval:s:1 { print(@c, 5); clear(@c); zero(@c); time(); exit(); } tracepoint:sched:sched_switch { @c[args->prev_comm] = count(); }"
);
case!(
    ok_tracepoint_array_index,
    "tracepoint:raw_syscalls:sys_enter { @[args->args[0]] = count(); }"
);

// Rejected programs.
// Issue 14, bug 14: a header no include directory holds stops the script.
case!(
    err_missing_header,
    "#include <lol/no.h>\n#define X 1\nBEGIN { exit(); }"
);
case!(err_unknown_function, "BEGIN { foo(); }");
case!(err_unknown_function_typo, "BEGIN { @x = cuont(); }");
// An abbreviation: `count` (two letters left out, much used) over `cat` (one wrong letter).
case!(err_unknown_function_abbreviated, "BEGIN { @x = cnt(); }");
case!(err_unknown_builtin, "BEGIN { @x = tidd; }");
case!(
    err_map_value_mismatch,
    r#"BEGIN { @x = 1 } END { @x = "a" }"#
);
case!(err_map_key_mismatch, r#"BEGIN { @x[1] = 1; @x["a"] = 2; }"#);
case!(err_unknown_tracepoint, "tracepoint:nope:nope { }");
case!(
    err_wildcard_matches_nothing,
    "tracepoint:syscalls:sys_enter_zzz* { }"
);
case!(
    err_no_such_field,
    "tracepoint:syscalls:sys_enter_openat { @[args->filenam] = count(); }"
);
case!(
    err_retval_in_tracepoint,
    "tracepoint:syscalls:sys_exit_read { @ = hist(retval); }"
);
case!(err_args_in_begin, "BEGIN { @ = args->x; }");
case!(
    ok_print_values,
    r#"BEGIN { $t = (1, "a"); print($t); print(5); print(comm); print(-1 > 0); @x[1] = 2; print(@x[1]); print(@x); print(@x, 1, 10); print(kstack); print(strftime("%H", nsecs)); }"#
);
case!(
    err_print_not_a_value,
    "tracepoint:syscalls:sys_enter_read { print(args); print(1, 2); }"
);
case!(err_printf_count, r#"BEGIN { printf("%d %d\n", 1); }"#);
case!(err_printf_bad_conversion, r#"BEGIN { printf("%y\n", 1); }"#);
case!(
    err_printf_string_for_int,
    r#"BEGIN { printf("%d\n", comm); }"#
);
case!(err_aggregation_read, "BEGIN { @h = hist(2); @x = @h + 1; }");
case!(err_aggregation_not_assigned, "BEGIN { count(); }");
case!(
    err_lhist_not_literal,
    "BEGIN { $x = 1; @l = lhist(5, $x, 10, 1); }"
);
case!(err_undefined_variable, "BEGIN { @x = $y; }");
case!(err_map_never_assigned, "BEGIN { @x = @never[1]; }");
case!(err_string_plus_int, r#"BEGIN { @x = comm + 1; }"#);
case!(
    err_provider_not_yet,
    "asyncwatchpoint:0x10000000:8:w { @ = count(); }"
);
// The help names every probe type weft compiles (it once said only four worked).
case!(
    err_watchpoint_not_yet,
    "watchpoint:0x10000000:8:w { @ = count(); }"
);
case!(
    err_unknown_provider,
    "tracepiont:syscalls:sys_enter_read { }"
);
case!(err_break_outside_loop, "BEGIN { break; }");
case!(err_bad_interval, "interval:parsecs:3 { }");
case!(
    err_several_errors,
    "BEGIN { foo(); @x = tidd; printf(\"%d\"); }"
);

// Streams.
case!(
    ok_stream_with_link_and_handler,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid { $fd = args->fd; }\n  stage tracepoint:sched:sched_switch by tid link (args->next_pid, args->next_comm) as task\n  stage tracepoint:sched:sched_wakeup by (args->pid, args->comm) as task\n  end tracepoint:syscalls:sys_exit_read by tid { $bytes = args->ret; }\n  timeout 2s\n  max 100\n}\nstream:s /args->bytes > 0/ { @[args->comm, args->fd] = hist(args->duration); @w = max(args->sched_wakeup); emit(); }"
);
case!(
    err_stream_without_end,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid\n}"
);
case!(
    err_stream_key_never_linked,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid\n  end tracepoint:sched:sched_wakeup by (args->pid, args->comm)\n}"
);
case!(
    ok_stream_links_keys_of_the_begin_keys_type,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_openat by tid\n  stage opened tracepoint:syscalls:sys_exit_openat by tid link (uint64)args->ret as fd\n  stage read tracepoint:syscalls:sys_enter_read by (uint64)args->fd as fd link (uint64) args->buf keep last\n  stage woken tracepoint:sched:sched_wakeup by args->pid as tid\n  end tracepoint:syscalls:sys_enter_read by (uint64)args->buf\n}"
);
case!(
    err_stream_key_ambiguous,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_openat by tid\n  stage tracepoint:syscalls:sys_exit_openat by tid link (uint64)args->ret\n  end tracepoint:syscalls:sys_enter_read by (uint64)args->fd\n}"
);
case!(
    err_stream_queue_needs_a_positive_count,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid\n  end tracepoint:syscalls:sys_exit_read by tid\n  queue 0\n}"
);
case!(
    // `let` and `for` variables are the block's own: no E0207 in the next
    // round, and only `$n` and `$total` are fields.
    ok_stream_let_and_for_are_locals,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid { let $t = 1; for ($k : 0..4) { $t += $k; } $n = $t; }\n  stage tracepoint:sched:sched_switch by tid { let $t = (1, \"a\"); $n += $t.0; }\n  end tracepoint:syscalls:sys_exit_read by tid { for ($k : 0..2) { $n++; } $total = $n; }\n}"
);
case!(
    // A thread id and an inode are both integers: `by tid` must not find
    // the instance filed under the inode (it would never match).
    err_stream_key_matched_by_type_alone,
    "stream pipe {\n  begin tracepoint:syscalls:sys_enter_read by (uint64)args->fd as inode\n  stage written tracepoint:syscalls:sys_exit_read by tid\n  end tracepoint:sched:sched_wakeup by (uint64)args->pid as inode\n}"
);
case!(
    err_stream_key_named_but_never_linked,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_openat by tid\n  stage tracepoint:syscalls:sys_exit_openat by tid link (uint64)args->ret as fd\n  end tracepoint:syscalls:sys_enter_read by (uint64)args->fd as file\n}"
);
case!(
    err_stream_stages_only_link_each_other,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_openat by tid\n  stage a tracepoint:syscalls:sys_exit_openat by args->ret as x link comm as y\n  stage b tracepoint:sched:sched_wakeup by args->comm as y link args->pid as x\n  end tracepoint:syscalls:sys_enter_read by comm as y\n}"
);
case!(
    err_stream_key_type_mismatch,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_openat by tid\n  stage tracepoint:syscalls:sys_exit_openat by tid link args->ret as k\n  end tracepoint:sched:sched_wakeup by args->comm as k\n}"
);
case!(
    err_stream_links_never_used,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_openat by tid link tid\n  end tracepoint:syscalls:sys_exit_openat by tid link args->ret\n}"
);
case!(
    err_stream_field_type_changes,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid { $x = 1; }\n  end tracepoint:syscalls:sys_exit_read by tid { $x = comm; }\n}"
);
case!(
    err_unknown_stream_and_arg,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid\n  end tracepoint:syscalls:sys_exit_read by tid\n}\nstream:t { }\nstream:s { @ = args->durration; }"
);
case!(err_emit_outside_handler, "BEGIN { emit(); }");
case!(
    err_duplicate_stage_names,
    "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid\n  stage x tracepoint:sched:sched_switch by tid\n  stage x tracepoint:sched:sched_wakeup by tid\n  end tracepoint:syscalls:sys_exit_read by tid\n}"
);

// `config = { ... }` and map declarations.
case!(
    ok_strcontains_and_clocks,
    "BEGIN { $s = \"abc\"; @a = strcontains($s, \"b\"); @l = strlen($s) + strlen(comm); @n = nsecs(monotonic) + nsecs(boot) + nsecs(tai) + nsecs(sw_tai) + nsecs() + jiffies; if (strcontains(comm, \"x\")) { exit(); } }"
);
case!(
    err_strcontains_and_clocks,
    "BEGIN { @l = strlen(1); @a = strcontains(\"foo\", 1); @b = strcontains(\"foo\"); @c = nsecs(moonotonic); @d = nsecs(1); @e = nsecs(boot, tai); }"
);
case!(
    ok_strncmp,
    "BEGIN { $s = \"abc\"; @a = strncmp($s, \"ab\", 2); $n = 3; @b = strncmp(comm, $s, $n); if (strncmp(\"x\", \"y\", 1) == 0) { exit(); } }"
);
case!(
    err_strncmp,
    "BEGIN { @a = strncmp(\"a\", 1, 1); @b = strncmp(\"a\", \"b\", \"c\"); @c = strncmp(\"a\", \"b\"); }"
);
// A script struct's `char[5]` is a 6-byte string: five characters print whole.
case!(
    ok_script_char_array_has_room_for_its_nul,
    "struct F { char s[5]; } BEGIN { $p = (struct F *)0; $a = $p->s; $b = str($p, 3); $c = str($p); }"
);
case!(
    ok_delete_as_a_value,
    "BEGIN { @a[1] = 1; @s = 1; $x = delete(@a, 2); if (delete(@s)) { exit(); } @n = !delete(@a[1]); }"
);
case!(
    ok_len_and_has_key,
    "BEGIN { @a[1] = 1; @b[1, \"x\"] = 2; @n = len(@a); if (has_key(@a, 2) && !has_key(@b, (1, \"y\"))) { @k = len(@b); } }"
);
case!(
    err_len_and_has_key,
    "BEGIN { @s = 1; @a[1] = 1; @n = len(@s); @h = has_key(@s, 1); @m = len(1); @o = len(@a, 1); @p = has_key(@a); @q = has_key(@a, \"x\"); }"
);
case!(
    ok_pton,
    "BEGIN { $a = pton(\"127.0.0.1\"); $b = pton(\"::ffff:1.2.3.4\"); @[ntop($a)] = ntop(pton(\"::1\")); }"
);
case!(
    err_pton,
    "BEGIN { $a = pton(\"10.1.2\"); $b = pton(comm); $c = pton(\"1::2::3\"); $d = pton(); }"
);
case!(
    ok_macaddr,
    "BEGIN { $a = macaddr(pton(\"::1\")); @[$a] = macaddr(0); $t = (1, $a); }"
);
case!(
    err_macaddr,
    "BEGIN { $a = macaddr(\"abcdef\"); $b = macaddr(pton(\"1.2.3.4\")); $c = macaddr(); $d = macaddr((1, 2)); }"
);
case!(
    ok_usermode_and_ncpus,
    "BEGIN { @b = usermode; } tracepoint:syscalls:sys_enter_read { @t[usermode, ncpus, __builtin_ncpus] = count(); } profile:hz:99 { @p[usermode] = count(); }"
);
case!(
    ok_config_and_map_decls,
    "config = { max_map_keys = 100; perf_rb_pages = 64; unstable_map_decl = 1 }\nlet @lru = lruhash(100);\nlet @c = percpulruhash(10);\nlet @h = hash(5);\nlet @p = percpuhash(5);\nBEGIN { @lru[1] = 2; @c[comm] = count(); @h = 1; @p = sum(1); }"
);
case!(
    err_map_decl_unknown_kind,
    "let @x = lruhsh(10);\nBEGIN { @x[1] = 1; }"
);
case!(
    err_map_decl_bad_size,
    "let @x = hash(0);\nlet @y = lruhash();\nlet @z = hash($1);\nBEGIN { @x[1] = 1; @y[1] = 1; @z[1] = 1; }"
);
case!(
    err_map_decl_aggregation_in_hash,
    "let @x = hash(10);\nBEGIN { @x[1] = count(); }"
);
case!(
    err_map_decl_value_in_percpu,
    "let @x = percpulruhash(10);\nBEGIN { @x[1] = 1; }"
);
case!(
    err_map_declared_twice,
    "let @x = hash(10);\nlet @x = lruhash(10);\nBEGIN { @x[1] = 1; }"
);

/// Constants from the script's `#define`s and the headers it includes,
/// with `BPFTRACE_HAVE_BTF` defined (the fixture kernel has BTF), and
/// enumerators of the kernel's BTF.
#[test]
fn preprocessor_constants_and_kernel_enumerators() {
    let multiarch = format!("/usr/include/{}-linux-gnu", std::env::consts::ARCH);
    let kernel = FixtureKernel::typical()
        .with_file(
            "/usr/include/sys/socket.h",
            b"#pragma once\n#include <bits/socket.h>\n#define SOMAXCONN 4096 /* max */\n".to_vec(),
        )
        .with_file(
            &format!("{multiarch}/bits/socket.h"),
            b"#define PF_INET 2\n#define AF_INET PF_INET\n#define AF_UNSPEC (0)\n#define SOCK_FN(x) ((x) + 1)\n#include <sys/socket.h>\n".to_vec(),
        );
    let src = "#include <sys/socket.h>\n#ifndef BPFTRACE_HAVE_BTF\n#define WEFT_MODE 7\n#else\n#define WEFT_MODE 9\n#endif\n#define WEFT_HEX 0x10\nBEGIN { @v = (AF_INET, SOMAXCONN, AF_UNSPEC, WEFT_MODE, WEFT_HEX, TCP_FIN_WAIT1); }";
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, _) = syntax::parse_with(map.file(id), &|n| sema::predefined_macro(&kernel, n));
    let (typed, diags) = check(&program, &kernel, &CheckOptions::default());
    assert!(!diags.has_errors(), "{}", render_all(diags.iter(), &map));
    let mut values: Vec<i64> = typed.probes[0].constants.values().copied().collect();
    values.sort_unstable();
    assert_eq!(values, [0, 2, 4, 9, 16, 4096]);
    // A function-like macro is not a constant.
    let f = map.add("f.bt", "#include <sys/socket.h>\nBEGIN { @ = SOCK_FN; }");
    let (program, _) = syntax::parse(map.file(f));
    let (_, diags) = check(&program, &kernel, &CheckOptions::default());
    assert!(diags.has_errors());
}

/// A map read (or deleted) in a probe written before the one that first
/// assigns it is that map, not the first map of the script (the reporting
/// round knew its type from the earlier rounds but recorded no index, so
/// the code generator read map 0: `@x` printed `@a`'s 7).
#[test]
fn a_map_used_before_its_first_assignment_is_that_map() {
    let src = "BEGIN { @a = 7; } interval:ms:100 { printf(\"%d\\n\", @x); delete(@x); } interval:ms:50 { @x = 5; }";
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, _) = syntax::parse(map.file(id));
    let (typed, diags) = check(
        &program,
        &FixtureKernel::typical(),
        &CheckOptions::default(),
    );
    assert!(!diags.has_errors(), "{}", render_all(diags.iter(), &map));
    let x = typed.map_index("@x").expect("@x");
    let uses: Vec<usize> = typed.probes[1].maps.values().copied().collect();
    assert_eq!(uses, [x, x], "{:?}", typed.maps);
}

/// Issue 16, defect 2: what sits in a false `#if` group is skipped, as
/// bpftrace's preprocessor skips it. bpftrace's runqlen.bt and dcsnoop.bt
/// define structs for kernels without BTF inside `#ifndef
/// BPFTRACE_HAVE_BTF`; on a kernel with BTF they are not compiled (weft
/// rejected them with E0206).
#[test]
fn a_false_preprocessor_group_is_skipped() {
    let src = "#ifndef BPFTRACE_HAVE_BTF\nstruct foo { int a; };\n#include <linux/sched.h>\n#endif\nBEGIN { printf(\"ok\\n\"); exit(); }";
    let with_btf = FixtureKernel::typical();
    let mut map = SourceMap::new();
    let id = map.add("ifn.bt", src);
    let (program, diags) =
        syntax::parse_with(map.file(id), &|n| sema::predefined_macro(&with_btf, n));
    assert!(diags.is_empty(), "{}", render_all(diags.iter(), &map));
    let (_, diags) = check(&program, &with_btf, &CheckOptions::default());
    assert!(diags.is_empty(), "{}", render_all(diags.iter(), &map));
}

/// Issue 16: `TASK_RUNNING` (a macro of the kernel's `<linux/sched.h>`,
/// which no user-space header defines) comes from the kernel's own headers
/// when they are installed, searched before `/usr/include` as bpftrace
/// searches them, and otherwise from weft's table of task states.
#[test]
fn kernel_macros_from_kernel_headers_or_the_task_state_table() {
    let src = "#include <linux/sched.h>\nBEGIN { @v = (TASK_RUNNING, TASK_KILLABLE, TASK_UNINTERRUPTIBLE); }";
    let constants = |kernel: &FixtureKernel| {
        let mut map = SourceMap::new();
        let id = map.add("runqlat.bt", src);
        let (program, _) = syntax::parse_with(map.file(id), &|n| sema::predefined_macro(kernel, n));
        let (typed, diags) = check(&program, kernel, &CheckOptions::default());
        assert!(!diags.has_errors(), "{}", render_all(diags.iter(), &map));
        let mut v: Vec<(u32, i64)> = typed.probes[0]
            .constants
            .iter()
            .map(|(id, v)| (id.0, *v))
            .collect();
        v.sort_unstable();
        v.into_iter().map(|(_, v)| v).collect::<Vec<i64>>()
    };
    // No kernel headers: the table.
    let plain = FixtureKernel::typical().with_file(
        "/usr/include/linux/sched.h",
        b"#define CLONE_VM 0x100\n".to_vec(),
    );
    assert_eq!(constants(&plain), [0, 0x102, 2]);
    // Kernel headers installed: theirs win (a made-up value shows it).
    let tree = "/lib/modules/6.99.0-test/build";
    let with_headers = FixtureKernel::typical()
        .with_file("/proc/sys/kernel/osrelease", b"6.99.0-test\n".to_vec())
        .with_file(&format!("{tree}/Makefile"), b"VERSION = 6\n".to_vec())
        .with_file(
            &format!("{tree}/include/linux/sched.h"),
            b"#include <linux/sched/state.h>\n#define TASK_RUNNING 0x00000007\n".to_vec(),
        )
        .with_file(
            &format!("{tree}/include/linux/sched/state.h"),
            b"#define TASK_UNINTERRUPTIBLE 0x00000002\n#define TASK_WAKEKILL 0x00000100\n#define TASK_KILLABLE (TASK_WAKEKILL | TASK_UNINTERRUPTIBLE)\n".to_vec(),
        )
        .with_file("/usr/include/linux/sched.h", b"#define CLONE_VM 0x100\n".to_vec());
    assert_eq!(constants(&with_headers), [7, 0x102, 2]);
}

// Issue 14: lexical scopes, `let`, block and `if` values.
case!(
    ok_let_scopes_and_block_values,
    "BEGIN { let $a = 1; if ($a) { let $b: uint8 = 300; @b = $b; } let $c; $c = \"s\"; @c = $c; @v = { let $d = 2; $d * $a }; @w = if ($a > 0) { 1 } else { 2 }; if (1) { let $b = \"again\"; @s = $b; } }"
);
case!(
    err_let_shadows_a_variable_in_scope,
    "BEGIN {\n  let $a = 1;\n  if (1) { let $a = 2; }\n}"
);
// A map loop's variable is the (key, value) tuple, a multi-key map's key a
// tuple; the body reads and updates the probe's variables. A map of
// count/sum/min/max/avg gives each value merged over the CPUs; a hist map,
// only printed, is refused.
case!(
    ok_for_loop_over_a_map_is_the_key_and_value,
    "BEGIN { @m[1] = 2; @t[1, \"a\"] = \"v\"; $n = 0; for ($kv : @m) { @s = $kv.1; $n += $kv.0; } for ($e : @t) { @k = $e.0.1; @v = $e.1; } @n = $n; for ($i : 0..3) { @r = $i; } }"
);
case!(
    ok_for_loop_over_a_map_of_aggregations_reads_merged_values,
    "BEGIN { @c[1] = count(); @a[2, 3] = avg(-5); for ($kv : @c) { @s = $kv.1; } for ($kv : @a) { @t = $kv.1; } }"
);
case!(
    err_for_loop_over_a_hist_map,
    "BEGIN { @h[1] = hist(5); for ($kv : @h) { @s = $kv.0; } }"
);

/// A kernel whose BTF lists no `bpf_for_each_map_elem` helper cannot run a
/// map loop: one sentence, at the loop.
#[test]
fn map_loop_needs_the_kernels_helper() {
    let src = "BEGIN {\n  @m[1] = 2;\n  for ($kv : @m) { @s = $kv.1; }\n}";
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, _) = syntax::parse(map.file(id));
    let mut old = ktypes::btf::BtfBuilder::new();
    old.enumeration("bpf_func_id", 4, &[("BPF_FUNC_unspec", 0)]);
    let kernel = FixtureKernel::new().with_btf(old.build());
    let (_, diags) = check(&program, &kernel, &CheckOptions::default());
    insta::assert_snapshot!(
        "map_loop_needs_the_kernels_helper",
        render_all(diags.iter(), &map)
    );
}

/// A kernel without the numeric iterator kfuncs cannot run a range loop.
#[test]
fn range_loop_needs_the_kernels_iterator() {
    let src = "BEGIN {\n  for ($i : 0..3) { @t = $i; }\n}";
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, _) = syntax::parse(map.file(id));
    let (_, diags) = check(&program, &FixtureKernel::new(), &CheckOptions::default());
    insta::assert_snapshot!(
        "range_loop_needs_the_kernels_iterator",
        render_all(diags.iter(), &map)
    );
}
// 0.17's tools read a variable after the `if` that assigned it: still one
// variable for the whole probe there.
case!(
    ok_variable_read_after_its_block_is_probe_wide_as_in_0_17,
    "BEGIN {\n  if (1) { $b = 1; } else { $b = 2; }\n  @ = $b;\n}"
);
case!(
    err_let_untyped_and_never_assigned_keeps_its_first_type,
    "BEGIN {\n  let $x;\n  $x = 1;\n  $x = \"s\";\n}"
);

// Issue 14: macros. A diagnostic inside an expansion points at the macro's
// text and names the call it was expanded from.
case!(
    ok_macro_expansions_are_typed_at_each_call,
    "macro twice(x) { x + x }\nmacro bump($v, @m) { $v += 1; @m[$v] = count(); $v }\nBEGIN { $n = 0; @a = twice(2); @s = twice(\"a\" == \"b\"); @r = bump($n, @hits); }"
);
case!(
    err_type_error_inside_a_macro_names_the_call,
    "macro half(x) { x / 2 }\nBEGIN {\n  @ = half(\"text\");\n}"
);
case!(
    err_macro_called_with_another_arity,
    "macro add(x, y) { x + y }\nBEGIN { @ = add(1); @b = nosuch!(); }"
);

/// Issue 16 (loads.bt): `kaddr("NAME")` is the address /proc/kallsyms gives
/// (read through the KernelInfo seam), `*` reads what an address points to:
/// a `uint64` for an integer (as bpftrace), the pointee for a pointer.
#[test]
fn kaddr_and_unary_star() {
    let kernel = FixtureKernel::typical().with_file(
        "/proc/kallsyms",
        b"ffffffff81000000 T _stext\nffffffff82a01040 D avenrun\n0000000000000000 D hidden_sym\n"
            .to_vec(),
    );
    let run = |src: &str| {
        let mut map = SourceMap::new();
        let id = map.add("loads.bt", src);
        let (program, _) = syntax::parse(map.file(id));
        let (typed, diags) = check(&program, &kernel, &CheckOptions::default());
        if diags.has_errors() {
            render_all(diags.iter(), &map)
        } else {
            print_types(&typed)
        }
    };
    let ok = run(
        "interval:s:1 { $a = kaddr(\"avenrun\"); @l1 = *$a; @l5 = *($a + 8); @w = *(uint32 *)$a; @pp = *(uint8 **)$a; }",
    );
    insta::assert_snapshot!("kaddr_and_unary_star", ok);
    let errors = run(
        "interval:s:1 { @a = kaddr(\"nosuch\"); @b = kaddr(\"hidden_sym\"); $n = \"x\"; @c = kaddr($n); @d = *\"str\"; @e = *(struct task_struct *)curtask; }",
    );
    insta::assert_snapshot!("kaddr_and_unary_star_errors", errors);
}

/// A statement after `exit()` or `return` in its block is a warning in
/// bpftrace's words, once per block (a tail expression too); the program
/// still compiles.
#[test]
fn a_statement_after_exit_or_return_is_unreachable() {
    let src =
        "interval:ms:100 { @a = 1; exit(); @a = 2; @b = 3 }\nBEGIN { if (1) { return; } @d = 1; }";
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, _) = syntax::parse(map.file(id));
    let (_, diags) = check(
        &program,
        &FixtureKernel::typical(),
        &CheckOptions::default(),
    );
    assert!(!diags.has_errors(), "{}", render_all(diags.iter(), &map));
    assert_eq!(
        render_all(diags.iter(), &map),
        "script.bt:1:35-41: WARNING: Unreachable statement\n\
         interval:ms:100 { @a = 1; exit(); @a = 2; @b = 3 }\n\
         \x20                         ------ the probe ends here\n\
         \x20                                 ~~~~~~ never runs\n\
         CODE: E0317\n"
    );
}
