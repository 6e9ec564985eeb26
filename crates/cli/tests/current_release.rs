//! Kernel tests of issue 22: constructs of bpftrace's current tools and
//! documented examples, each in a script of our own run on the workload,
//! whose own calls give every expected value.

mod common;

use common::{trace_workload, workload};

/// A map fed by two tracepoints whose pointer fields differ only by
/// `const` (`clock_nanosleep`'s `const struct __kernel_timespec *rqtp`,
/// `nanosleep`'s without) keeps the pointer type, so `.tv_nsec` reads
/// through it.
#[test]
fn a_map_of_pointers_differing_by_const_reads_through_them() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_clock_nanosleep,tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { @r[tid] = args.rqtp; }
        tracepoint:syscalls:sys_exit_nanosleep /has_key(@r, tid)/ { $t = @r[tid]; @ns[$t.tv_sec, $t.tv_nsec] = count(); delete(@r, tid); }";
    let out = trace_workload(script, "nanosleep 1000003 3", &[]);
    assert_eq!(out.stdout, "\n\n@ns[0, 1000003]: 3\n");
}

/// `func` is the probed function as a `usym`, as in bpftrace: one map
/// holds it and `usym(reg("ip"))`, and both print the function's name; at
/// a return `func` is still the function (not the return address).
#[test]
fn func_shares_a_map_with_usym() {
    require_root!();
    let bin = workload();
    let bin = bin.display();
    let script = format!(
        r#"uprobe:{bin}:weft_workload_marker /pid == cpid/ {{ @[func] = count(); @[usym(reg("ip"))] = count(); }}
        uretprobe:{bin}:weft_workload_marker /pid == cpid/ {{ @r[func] = count(); }}"#
    );
    let out = trace_workload(&script, "call 3", &[]);
    assert_eq!(
        out.stdout,
        "\n\n@[weft_workload_marker]: 6\n@r[weft_workload_marker]: 3\n"
    );
}

/// `syscall_name()` names this machine's system call numbers, and a number
/// none has as bpftrace does.
#[test]
fn syscall_name_names_the_workloads_calls() {
    require_root!();
    let script = r#"tracepoint:raw_syscalls:sys_enter /pid == cpid && (args.id == 110 || args.id == 35)/ { @[syscall_name(args.id)] = count(); }
        END { printf("%s|%s\n", syscall_name(0), syscall_name(-1)); }"#;
    let out = trace_workload(script, "getppid 5 nanosleep 1000 2", &[]);
    assert_eq!(
        out.stdout,
        "read|Unknown syscall\n\n\n@[nanosleep]: 2\n@[getppid]: 5\n"
    );
}

/// `find()` gives the element's value to the variable when the key is
/// there, and leaves it alone when it is not.
#[test]
fn find_reads_the_element_it_finds() {
    require_root!();
    let script = r#"tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n[tid] = (3, "x"); }
        tracepoint:syscalls:sys_exit_getppid /pid == cpid/ {
            let $v = (0, "none");
            if (find(@n, tid + 1, $v)) { @wrong = count(); }
            @kept[$v] = count();
            if (find(@n, tid, $v)) { @found[$v] = count(); }
            delete(@n, tid);
        }"#;
    let out = trace_workload(script, "getppid 4", &[]);
    assert_eq!(out.stdout, "\n\n@found[3, x]: 4\n@kept[0, none]: 4\n");
}

/// `fail()` stops the script where it is reached, with its text; in a
/// branch its literal condition never takes, it says nothing.
#[test]
fn fail_stops_the_script_only_where_reached() {
    require_root!();
    let script = r#"BEGIN { if ($1 < 2) { fail("want more than 1, got %d", $1); } printf("ran\n"); exit(); }"#;
    let out = common::run_weft(&["-e", script, "1"], std::time::Duration::from_secs(30));
    assert_eq!(out.status, Some(1), "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .starts_with("stdin:1:23-59: ERROR: want more than 1, got 1\n"),
        "{}",
        out.stderr
    );
    let out = common::run_weft(
        &["-q", "-e", script, "3"],
        std::time::Duration::from_secs(30),
    );
    common::assert_succeeded(&out);
    assert_eq!(out.stdout, "ran\n\n\n");
}

/// An enumerator of the kernel's BTF keeps its enum type: `%s` prints its
/// name, as the script's own enums print (bpftrace's stdlib reference
/// example, with an enum whose value the kernel's ABI fixes).
#[test]
fn a_kernel_enumerator_prints_its_name() {
    require_root!();
    let script = r#"enum custom { CUSTOM_ENUM = 3 }; BEGIN { $r = BPF_MAP_TYPE_RINGBUF; printf("%d, %s, %s\n", $r, $r, CUSTOM_ENUM); exit(); }"#;
    let out = common::run_weft(&["-q", "-e", script], std::time::Duration::from_secs(30));
    common::assert_succeeded(&out);
    assert_eq!(out.stdout, "27, BPF_MAP_TYPE_RINGBUF, CUSTOM_ENUM\n\n\n");
}

/// `is_err()` is true for the last 4095 values of the address space (the
/// kernel's `ERR_PTR`s), false on either side of them.
#[test]
fn is_err_knows_the_error_pointers() {
    require_root!();
    let script = r#"BEGIN { printf("%d %d %d %d %d\n", is_err(-1), is_err(-4095), is_err(-4096), is_err(0), is_err((uint64)-22)); exit(); }"#;
    let out = common::run_weft(&["-q", "-e", script], std::time::Duration::from_secs(30));
    common::assert_succeeded(&out);
    assert_eq!(out.stdout, "1 1 0 0 1\n\n\n");
}

/// `write_user()` (with `--unsafe`) rewrites the path the workload passes
/// to `openat`, so it creates the other file; each write says it worked.
/// A kernel that refuses `bpf_probe_write_user` (this machine's is locked
/// down) gets one sentence saying so, and nothing runs.
#[test]
fn write_user_rewrites_the_workloads_path() {
    require_root!();
    let asked = common::scratch("wu-a");
    let written = common::scratch("wu-b");
    let (asked_s, written_s) = (asked.display().to_string(), written.display().to_string());
    // O_CREAT (64): the workload's own opens, not the loader's.
    let script = format!(
        r#"tracepoint:syscalls:sys_enter_openat /pid == cpid && (args.flags & 64)/ {{ $p = "{written_s}"; @ok[write_user(args.filename, $p, {})] = count(); }}"#,
        written_s.len() + 1
    );
    let cmd = format!("{} openat {asked_s} 3", workload().display());
    let out = common::run_weft(
        &["-q", "--unsafe", "-c", &cmd, "-e", &script],
        std::time::Duration::from_secs(30),
    );
    let (asked_made, written_made) = (asked.exists(), written.exists());
    let _ = std::fs::remove_file(&asked);
    let _ = std::fs::remove_file(&written);
    if out
        .stderr
        .contains("cannot use helper bpf_probe_write_user")
    {
        assert_eq!(out.status, Some(1), "{}", out.stderr);
        assert!(
            out.stderr
                .contains("HINT: this kernel does not give that helper to this kind of program"),
            "{}",
            out.stderr
        );
        assert!(!asked_made && !written_made);
        return;
    }
    common::assert_succeeded(&out);
    assert_eq!(out.stdout, "\n\n@ok[true]: 3\n");
    assert!(!asked_made && written_made, "{asked_made} {written_made}");
}
