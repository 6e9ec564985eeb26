//! Scripts that must parse without diagnostics, shared by the snapshot and robustness tests.

#![allow(dead_code, reason = "each test binary uses a subset")]

/// `(name, source)`; the name is the snapshot name.
pub const OK_CASES: &[(&str, &str)] = &[
    // ---- items and probes ----
    (
        "begin_end",
        r#"BEGIN { printf("hello\n"); } END { exit(); }"#,
    ),
    (
        "begin_end_lowercase",
        "begin { print(1); } end { print(2); }",
    ),
    (
        "probe_multi_comma",
        "kprobe:tcp_reset,kprobe:tcp_v4_rcv { @[probe] = count(); }",
    ),
    (
        "probe_multi_newline",
        "kprobe:a,\nkprobe:b\nkretprobe:c { @x = 1; }",
    ),
    ("probe_trailing_comma", "kprobe:a, kprobe:b, { }"),
    (
        "probe_wildcards",
        "tracepoint:syscalls:sys_enter_* { @[probe] = count(); } kprobe:vfs_* { }",
    ),
    (
        "providers_long",
        "tracepoint:sched:sched_switch, kprobe:f, kretprobe:f, uprobe:/bin/sh:main, uretprobe:/bin/sh:main, \
         usdt:/bin/x:prov:probe, profile:hz:99, interval:ms:100, software:cpu-clock:1000, \
         hardware:cache-misses:1000000, watchpoint:0x10000000:8:rw, asyncwatchpoint:0x1000:4:w, \
         kfunc:vfs_read, fentry:vfs_read, kretfunc:vfs_read, fexit:vfs_read, rawtracepoint:sched_switch, \
         iter:task, self:signal:SIGUSR1, test:foo, bench:bar { }",
    ),
    (
        "providers_short",
        "t:syscalls:sys_enter_read, k:f, kr:f, u:/bin/sh:main, ur:/bin/sh:main, U:/bin/x:prov:probe, \
         p:hz:99, i:s:1, s:faults:1, h:cycles:1000, w:0x1000:8:r, aw:0x1000:8:r, f:vfs_read, \
         fr:vfs_read, rt:sched_switch, it:task_file { }",
    ),
    (
        "attach_paths_offsets",
        "uprobe:/bin/bash:readline, uprobe:libc:malloc, uprobe:/x:f+0x10, kprobe:mod:func, \
         kprobe:func+8, interval:1s, uprobe:$1:f, uprobe:\"/path with space\":f, \
         uprobe:/bin/bash:\"cpp::ns::fn\" { }",
    ),
    (
        "predicate",
        r#"kprobe:vfs_read /comm == "bash" && arg2 > 16/ { @ = count(); }"#,
    ),
    (
        "predicate_division_in_parens",
        "kprobe:f /(arg0 / 2) > 1/ { }",
    ),
    (
        "predicate_map",
        "kretprobe:vfs_read /@start[tid]/ { delete(@start[tid]); }",
    ),
    (
        "config_block",
        "config = { stack_mode = perf; max_map_keys = 1024, missing_probes = warn }\nBEGIN { }",
    ),
    (
        "map_decls",
        "let @a = lruhash(100);\nlet @b = hash(10);\nlet @c = percpuhash(5);\nlet @d = percpulruhash(7);\nBEGIN { }",
    ),
    (
        "import",
        "import \"helpers.bt\";\nimport \"lib\";\nBEGIN { }",
    ),
    (
        "macros",
        "macro one() { 1 }\nmacro add_one(x) { x + 1 }\nmacro inc($a, @b) { $a += 1; @b += 1; }\nmacro greet { print(\"hi\"); }\nBEGIN { greet!(); print(add_one(one())); }",
    ),
    (
        "function",
        "fn add($a: int64, $b: uint32): int64 { return $a + $b; }\nfn nop(): void { return; }",
    ),
    (
        "shebang_and_preprocessor",
        "#!/usr/bin/env bpftrace\n#include <linux/sched.h>\n#define RED \"\\033[31m\"\n#define MULTI 1 + \\\n  2\nBEGIN { }",
    ),
    (
        // A false group is dropped unread (here: text that is no bpftrace),
        // as bpftrace's preprocessor drops it; the taken branch's lines stay.
        "preprocessor_conditionals",
        "#ifdef NOT_DEFINED\nthis is { not bpftrace\n#if 1\n#endif\n#elif defined(X) || 1\n#define TAKEN 1\n#else\nstruct hidden { int a; };\n#endif\n#if TAKEN\nstruct shown { int a; };\n#endif\nBEGIN { }",
    ),
    (
        "struct_defs",
        "struct S {\n  int x;\n  struct { char c; } inner;\n};\nunion U { int a; long b; }\nenum E { A = 1, B };\nBEGIN { }",
    ),
    // ---- statements ----
    (
        "assign_map_var",
        "BEGIN { @m = 1; @m[1, \"a\"] = 2; @ = 3; $x = 4; }",
    ),
    (
        "compound_assign",
        "BEGIN { @a += 1; @b -= 1; @c *= 2; @d /= 2; @e %= 3; $f &= 1; $g |= 1; $h ^= 1; $i <<= 1; $j >>= 1; }",
    ),
    (
        "inc_dec",
        "BEGIN { @a++; @b--; ++@c; --@d; $x++; --$x; @m[1]++; $y = $x++; }",
    ),
    (
        "let_forms",
        "BEGIN { let $a; let $b = 1; let $c: uint32 = 2; let $d: struct task_struct * = curtask; }",
    ),
    (
        "if_else_chain",
        "BEGIN { if ($x == 1) { print(1); } else if ($x == 2) { print(2); } else { print(3); } if $y { } if (a) || (b) { } }",
    ),
    (
        "unroll_while",
        "BEGIN { unroll (3) { @c++; } while ($i < 10) { $i++; if ($i == 5) { continue; } } }",
    ),
    (
        "for_loops",
        "BEGIN { for ($kv : @map) { print($kv.0, $kv.1); } for ($i : 0..10) { print($i); } for ($c : 0..ncpus) { } }",
    ),
    (
        "jumps",
        "BEGIN { for ($i : 0..3) { break; continue; } return; } END { return 1; }",
    ),
    ("nested_blocks", "BEGIN { { $x = 1; { $y = 2; } } }"),
    (
        "optional_final_semicolon",
        "BEGIN { print(1); print(2) } END { @x = 1 }",
    ),
    ("empty_statements", "BEGIN { ;; print(1);; }"),
    ("discard", "BEGIN { _ = has_key(@a, 1); }"),
    (
        "block_expression",
        "BEGIN { let $a = { let $b = 1; $b }; $c = { 2 }; }",
    ),
    // ---- expressions ----
    (
        "precedence",
        "BEGIN { $x = 1 + 2 * 3 - 4 / 2 % 3 << 1 >> 2 < 3 <= 4 > 5 >= 6 == 7 != 8 & 9 ^ 10 | 11 && 12 || 13; }",
    ),
    (
        "left_assoc",
        "BEGIN { $x = 10 - 3 - 2; $y = 8 / 4 / 2; $z = 1 << 2 << 3; }",
    ),
    (
        "unary_ops",
        "BEGIN { $a = !$x; $b = ~$x; $c = -$x; $d = *$p; $e = &$v; $f = - -1; $g = !!$x; }",
    ),
    (
        "ternary",
        "BEGIN { $a = $x ? 1 : 2; $b = $x ? $y ? 1 : 2 : 3; $c = $x ?: 4; $d = $x > 0 ? \"pos\" : \"neg\"; }",
    ),
    (
        "casts",
        "BEGIN { $a = (uint32)$x; $b = (int8)-1; $c = (struct task_struct *)curtask; $d = (uint8[4])$x; \
         $e = (union u *)arg0; $f = (enum e)1; $g = (uint64)(1 << 2); $h = (struct sock **)arg1; }",
    ),
    (
        "not_casts",
        "BEGIN { $a = (pid) - 1; $b = (arg0) * 2; $c = ($x) + 1; $d = (1); }",
    ),
    (
        "field_access",
        "kprobe:f { $a = args->filename; $b = ((struct file *)arg0)->f_path.dentry->d_name.name; $c = $t.0; $d = $t.0.1; $e = curtask->mm->arg_start; }",
    ),
    (
        "index",
        "BEGIN { $a = $arr[0]; $b = args->argv[1]; $c = @m[1][2]; }",
    ),
    (
        "calls",
        "BEGIN { f(); g(1); h(1, \"a\", $x); printf(\"%s %d\\n\", comm, pid); print((1, 2)); }",
    ),
    (
        "maps",
        "BEGIN { print(@m); print(@m[k]); print(@m[k1, k2]); print(@); print(@[1]); }",
    ),
    (
        "positional",
        "BEGIN { printf(\"%d %s %d\\n\", $1, str($2), $#); }",
    ),
    (
        "builtins",
        "kprobe:f { print((pid, tid, uid, comm, nsecs, elapsed, cpu, kstack, ustack, arg0, arg1, sarg0, retval, func, probe, curtask, args, cgroup, ctx)); }",
    ),
    (
        "tuples",
        "BEGIN { $a = (1, 2); $b = (1, \"x\", (2, 3)); $c = (); $d = (1,); $e = $a.1; }",
    ),
    (
        "records",
        "BEGIN { $a = (color = \"green\", size = 2); print($a.size); }",
    ),
    (
        "sizeof_offsetof",
        "BEGIN { print(sizeof(struct task_struct)); print(sizeof($x)); print(sizeof(uint8[4])); print(offsetof(struct task_struct, pid)); print(offsetof(struct s, a.b.c)); }",
    ),
    (
        "typeof_macro_arg",
        "macro p_cast(a, b) { (a*)b }\nBEGIN { print(p_cast(typeof(uint8), -1)); }",
    ),
    (
        "int_literals",
        "BEGIN { print((0, 42, 0x1F, 0X10, 0b101, 0o17, 017, 1_000_000, 123u, 123UL, 123ll, 123ULL, 18446744073709551615)); }",
    ),
    (
        "duration_and_scientific",
        "BEGIN { print((1ns, 5us, 10ms, 1s, 2m, 3h, 1d, 1e6, 2e3, 1_0e2)); }",
    ),
    (
        "string_escapes",
        r#"BEGIN { print("a\nb\tc\\d\"e\x41\101\0\r"); }"#,
    ),
    ("char_literals", r"BEGIN { print(('a', '\n', '\0', ' ')); }"),
    ("bools", "BEGIN { $a = true; $b = false; $c = !true; }"),
    (
        "comments",
        "// line comment\nBEGIN /* block\ncomment */ { /* inside */ print(1); // trailing\n}",
    ),
    // ---- one-liners from seeds/004 (with `\n` restored inside strings) ----
    (
        "seed_execve",
        r#"tracepoint:syscalls:sys_enter_execve { printf("%s called execve\n", comm); }"#,
    ),
    (
        "seed_count_syscalls",
        "tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }",
    ),
    (
        "seed_execve_args",
        r#"tracepoint:syscalls:sys_enter_execve { printf("%-6d %-16s ", pid, comm); join(args->argv); }"#,
    ),
    (
        "seed_openat",
        r#"tracepoint:syscalls:sys_enter_openat { printf("%s opened %s\n", comm, str(args->filename)); }"#,
    ),
    (
        "seed_vfs_read_path",
        "kprobe:vfs_read { @[str(((struct file *)arg0)->f_path.dentry->d_name.name)] = count(); }",
    ),
    ("seed_read_hist", "kprobe:vfs_read { @bytes = hist(arg2); }"),
    (
        "seed_read_latency",
        "kprobe:vfs_read { @start[tid] = nsecs; }\n             kretprobe:vfs_read /@start[tid]/ {\n                 @us = hist((nsecs - @start[tid]) / 1000);\n                 delete(@start[tid]);\n             }",
    ),
    (
        "seed_sched_switch_pid",
        "tracepoint:sched:sched_switch /args->prev_pid == 1234 || args->next_pid == 1234/ {\n    printf(\"%-8d %-16s -> %-16s\\n\", nsecs, args->prev_comm, args->next_comm);\n}",
    ),
    (
        "seed_runqueue_latency",
        "tracepoint:sched:sched_wakeup { @queuetime[args->pid] = nsecs; }\ntracepoint:sched:sched_switch /args->prev_pid == 0 && @queuetime[args->next_pid]/ {\n    @us = hist((nsecs - @queuetime[args->next_pid]) / 1000);\n    delete(@queuetime[args->next_pid]);\n}",
    ),
    (
        "seed_offcpu_stack",
        "tracepoint:sched:sched_switch {\n    @blocked[args->prev_pid] = nsecs;\n}\ntracepoint:sched:sched_switch /args->prev_pid == 0 && @blocked[args->next_pid]/ {\n    @us[kstack] = sum((nsecs - @blocked[args->next_pid]) / 1000);\n    delete(@blocked[args->next_pid]);\n}",
    ),
    (
        "seed_tcp_retransmit",
        "tracepoint:tcp:tcp_retransmit_skb {\n    printf(\"retransmit: %s:%d -> %s:%d\\n\",\n           ntop(args->saddr), args->sport,\n           ntop(args->daddr), args->dport);\n}",
    ),
    (
        "seed_tcp_connect",
        "kprobe:tcp_v4_connect {\n    @connects[ntop(((struct sockaddr_in *)arg1)->sin_addr.s_addr)] = count();\n}",
    ),
    (
        "seed_accept_latency",
        "kprobe:inet_csk_accept { @start[tid] = nsecs; }\nkretprobe:inet_csk_accept /@start[tid]/ {\n    @accept_us = hist((nsecs - @start[tid]) / 1000);\n    delete(@start[tid]);\n}",
    ),
    (
        "seed_profile",
        "profile:hz:99 { @[kstack, ustack, comm] = count(); }",
    ),
    (
        "seed_profile_kstack",
        "profile:hz:99 { @[kstack] = count(); }",
    ),
    (
        "seed_offcpu_blocked",
        "tracepoint:sched:sched_switch {\n    if (args->prev_state == 1 || args->prev_state == 2) {\n        @blocked[args->prev_pid, kstack] = nsecs;\n    }\n}\n\ntracepoint:sched:sched_switch /args->prev_pid == 0 && @blocked[args->next_pid, kstack]/ {\n    @offcpu_us[@blocked[args->next_pid, kstack]] =\n        sum((nsecs - @blocked[args->next_pid, kstack]) / 1000);\n    delete(@blocked[args->next_pid, kstack]);\n}",
    ),
    (
        "seed_function_duration",
        "kprobe:ext4_file_write_iter { @start[tid] = nsecs; }\nkretprobe:ext4_file_write_iter /@start[tid]/ {\n    @duration_us[kstack] = sum((nsecs - @start[tid]) / 1000);\n    delete(@start[tid]);\n}\nEND { print(@duration_us); }",
    ),
    // ---- tools-style scripts ----
    ("tool_opensnoop", TOOL_OPENSNOOP),
    ("tool_biolatency", TOOL_BIOLATENCY),
    ("tool_modern", TOOL_MODERN),
    (
        "stream_read_latency",
        "stream read_req {\n    begin tracepoint:syscalls:sys_enter_read /comm == \"weftwl\"/ by tid { $fd = args->fd; }\n    end   tracepoint:syscalls:sys_exit_read by tid { $bytes = args->ret; }\n    timeout 5s\n}\nstream:read_req /args->duration > 1000/ { @[args->comm] = hist(args->duration); }",
    ),
    (
        "stream_named_keys_several_links_and_keep_last",
        "stream conn {\n    begin uprobe:libc:getaddrinfo by tid\n    stage syn tracepoint:sock:inet_sock_set_state by tid link args -> skaddr link (uint64)args->skaddr as sock keep last\n    end tracepoint:sock:inet_sock_set_state by args->skaddr keep first\n}",
    ),
    (
        "stream_queue_per_key",
        "stream pipe {\n    begin tracepoint:syscalls:sys_enter_write by (uint64)args->fd as fd\n    end tracepoint:syscalls:sys_exit_read by (uint64)args->fd as fd\n    queue 64\n}",
    ),
    (
        "stream_stages_links_and_options",
        "stream write_io {\n    begin tracepoint:syscalls:sys_enter_pwrite64 by tid\n    stage insert tracepoint:block:block_rq_insert by tid link (args->dev, args->sector) { $sector = args->sector; }\n    stage tracepoint:block:block_rq_issue, tracepoint:block:block_rq_merge by (args->dev, args->sector);\n    end tracepoint:block:block_rq_complete by (args->dev, args->sector)\n    max 100\n    incomplete\n}",
    ),
];

const TOOL_OPENSNOOP: &str = r#"#!/usr/bin/env bpftrace
/*
 * opensnoop-style: trace open() syscalls, showing filenames and return values.
 */
BEGIN
{
	printf("Tracing open syscalls... Hit Ctrl-C to end.\n");
	printf("%-6s %-16s %4s %3s %s\n", "PID", "COMM", "FD", "ERR", "PATH");
}

tracepoint:syscalls:sys_enter_open,
tracepoint:syscalls:sys_enter_openat
{
	@filename[tid] = args->filename;
}

tracepoint:syscalls:sys_exit_open,
tracepoint:syscalls:sys_exit_openat
/@filename[tid]/
{
	$ret = args->ret;
	$fd = $ret >= 0 ? $ret : -1;
	$errno = $ret >= 0 ? 0 : - $ret;

	printf("%-6d %-16s %4d %3d %s\n", pid, comm, $fd, $errno,
	    str(@filename[tid]));
	delete(@filename[tid]);
}

END
{
	clear(@filename);
}
"#;

const TOOL_BIOLATENCY: &str = r#"#!/usr/bin/env bpftrace
#include <linux/blkdev.h>

BEGIN
{
	printf("Tracing block device I/O... Hit Ctrl-C to end.\n");
}

kprobe:blk_account_io_start,
kprobe:__blk_account_io_start
{
	@start[arg0] = nsecs;
}

kprobe:blk_account_io_done,
kprobe:__blk_account_io_done
/@start[arg0]/
{
	$rq = (struct request *)arg0;
	@usecs[$rq->rq_disk->disk_name] = hist((nsecs - @start[arg0]) / 1000);
	@size = lhist($rq->__data_len, 0, 1048576, 4096);
	delete(@start[arg0]);
}

interval:s:10
{
	print(@usecs);
	clear(@usecs);
}

END
{
	clear(@start);
}
"#;

const TOOL_MODERN: &str = r#"config = {
    stack_mode = perf;
    max_strlen = 128
}

import "helpers.bt";

let @latency = lruhash(10240);

macro elapsed_us($t) {
    (nsecs - $t) / 1us
}

fn bucket($v: uint64): uint64 {
    return $v > 1000 ? 1000 : $v;
}

fentry:vfs_read, fentry:vfs_write
/comm != "bpftrace"/
{
    @start[tid] = nsecs;
}

fexit:vfs_read, fexit:vfs_write
/has_key(@start, tid)/
{
    let $s: uint64 = @start[tid];
    @latency[comm, probe] = hist(elapsed_us($s));
    @calls[func] = count();
    for ($kv : @calls) {
        if ($kv.1 > 100) { break; }
    }
    delete(@start, tid);
}

interval:1s {
    $rec = (name = "tick", at = elapsed / 1s);
    print($rec);
}
"#;
