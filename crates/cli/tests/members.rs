//! Kernel tests of struct members through BTF and of fentry compiled as a
//! kprobe:
//!
//! - `curtask->tgid`, `curtask->pid` and `((struct task_struct *)curtask)->comm`
//!   equal `pid`, `tid` and `comm` in every event of the workload, exactly;
//! - fentry/fexit scripts compiled as kprobe/kretprobe (as on a kernel with
//!   kprobes but no BPF trampolines) and the seed's `vfs_read` one-liner
//!   pass this kernel's verifier (load only: this kernel has no kprobes).
//! - system call numbers from `<syscall.h>` are the target's: 7 getppid
//!   calls seen by `rawtracepoint:sys_enter` with `arg1 == __NR_getppid`.

mod common;

use common::trace_workload;
use ktypes::KernelInfo;
use runtime::{LoadOptions, Session, SysKernelInfo};

/// Whether the running kernel has BTF.
fn has_btf() -> bool {
    SysKernelInfo::new().btf().is_ok()
}

#[test]
fn curtask_members_match_pid_tid_and_comm() {
    require_root!();
    testgate::require!(
        has_btf(),
        "this kernel has no BTF, which struct members need"
    );
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @tgid[curtask->tgid == pid] = count(); @tid[curtask->pid == tid] = count(); @comm[((struct task_struct *)curtask)->comm == comm] = count(); }",
        "getppid 23",
        &[],
    );
    for line in ["@tgid[true]: 23", "@tid[true]: 23", "@comm[true]: 23"] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "expected `{line}` in:\n{}\nstderr:\n{}",
            out.stdout,
            out.stderr
        );
    }
    assert!(!out.stdout.contains("[0]"), "{}", out.stdout);
}

#[test]
fn a_struct_pointer_kept_in_a_variable_keeps_its_members() {
    require_root!();
    testgate::require!(
        has_btf(),
        "this kernel has no BTF, which struct members need"
    );
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { $t = (struct task_struct *)curtask; @tgid[$t->tgid == pid] = count(); $parent = $t->real_parent; @parent[$parent->tgid == $t->real_parent->pid] = count(); }",
        "getppid 17",
        &[],
    );
    for line in ["@tgid[true]: 17", "@parent[true]: 17"] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "expected `{line}` in:\n{}\nstderr:\n{}",
            out.stdout,
            out.stderr
        );
    }
}

use common::{KprobesOnly, compile};

#[test]
fn fentry_as_kprobe_and_member_reads_pass_the_verifier() {
    require_root!();
    testgate::require!(
        has_btf(),
        "this kernel has no BTF, which fentry and struct members need"
    );
    let kernel = KprobesOnly(SysKernelInfo::new());
    let scripts = [
        "fentry:vfs_read { @[str(args->file->f_path.dentry->d_name.name)] = count(); @c = sum(args->count); }",
        "kfunc:do_sys_openat2 { @[args->dfd] = count(); @f[str(args->filename)] = count(); }",
        "fexit:vfs_read { @r = hist(retval); }",
        "kprobe:vfs_read { @[str(((struct file *)arg0)->f_path.dentry->d_name.name)] = count(); @m = max(((struct file *)arg0)->f_pos); }",
        "kprobe:tcp_connect { @[ntop(((struct sockaddr_in *)arg1)->sin_addr.s_addr)] = count(); }",
        // bpftrace's tcpconnect.bt: a struct pointer kept in a variable
        "kprobe:tcp_connect { $sk = ((struct sock *) arg0); $inet_family = $sk->__sk_common.skc_family; if ($inet_family == 2) { @[ntop($sk->__sk_common.skc_daddr), $sk->__sk_common.skc_dport] = count(); } }",
    ];
    for src in scripts {
        let compiled = compile(src, &kernel);
        for p in &compiled.manifest.programs {
            assert!(
                matches!(p.attach, abi::Attach::Kprobe { .. }),
                "{src}: {:?}",
                p.attach
            );
        }
        Session::load(&compiled.elf, &compiled.manifest, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{src}: the verifier must accept it: {e}"));
    }
}

#[test]
fn kernel_enumerators_are_constants() {
    require_root!();
    testgate::require!(
        has_btf(),
        "this kernel has no BTF, where enumerators are found"
    );
    // Values fixed by the kernel's ABI: enum tcp_state and enum bpf_map_type.
    let out = common::run_weft(
        &[
            "-e",
            "BEGIN { @fin_wait1 = TCP_FIN_WAIT1; @ringbuf = BPF_MAP_TYPE_RINGBUF; @sum = TCP_ESTABLISHED + TCP_FIN_WAIT1; printf(\"%d %d\\n\", TCP_FIN_WAIT1, BPF_MAP_TYPE_RINGBUF); exit(); }",
        ],
        std::time::Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    // An enumerator of a named enum keeps its type, printed by name, as in
    // bpftrace; one of an anonymous enum (tcp_state's) is an integer, and
    // so is arithmetic on either.
    for line in [
        "4 27",
        "@fin_wait1: 4",
        "@ringbuf: BPF_MAP_TYPE_RINGBUF",
        "@sum: 5",
    ] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "{line}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn header_constants_are_found_through_includes() {
    require_root!();
    // Debian keeps <sys/socket.h> in the multiarch directory.
    let headers = std::fs::read_dir("/usr/include")
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| d.path().join("sys/socket.h").exists())
        || std::path::Path::new("/usr/include/sys/socket.h").exists();
    testgate::require!(headers, "no C library headers (apt-get install libc6-dev)");
    // bpftrace's tcpconnect.bt: AF_INET comes from <sys/socket.h> through
    // <bits/socket.h> (AF_INET → PF_INET → 2).
    let out = common::run_weft(
        &[
            "-e",
            "#ifndef BPFTRACE_HAVE_BTF\n#include <linux/socket.h>\n#else\n#include <sys/socket.h>\n#endif\nBEGIN { @inet = AF_INET; @inet6 = AF_INET6; exit(); }",
        ],
        std::time::Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    for line in ["@inet: 2", "@inet6: 10"] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "{line}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn system_call_numbers_from_syscall_h_are_the_targets() {
    require_root!();
    testgate::require!(
        std::path::Path::new("/usr/include/syscall.h").exists(),
        "no C library headers (apt-get install libc6-dev)"
    );
    // <asm/unistd.h> picks unistd_64.h on x86-64 (getppid 110), not the
    // i386 numbers of unistd_32.h (getppid 64) it names first.
    let out = trace_workload(
        "#include <syscall.h>\nrawtracepoint:sys_enter /pid == cpid && arg1 == __NR_getppid/ { @[__NR_getppid] = count(); }",
        "getppid 7",
        &[],
    );
    let nr = if cfg!(target_arch = "x86_64") {
        110
    } else {
        173
    };
    assert_eq!(out.stdout, format!("\n\n@[{nr}]: 7\n"), "{}", out.stderr);
}

#[test]
fn bswap_reverses_the_bytes_of_its_argument_type() {
    require_root!();
    // Values as bpftrace 0.17 prints them for the same script.
    let out = common::run_weft(
        &[
            "-e",
            "BEGIN { $p = (uint16)0x1234; @a = bswap($p); @b = bswap((uint32)0x12345678); @c = bswap(0x0102030405060708); @d = bswap((uint8)0xab); exit(); }",
        ],
        std::time::Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    for line in [
        "@a: 13330",
        "@b: 2018915346",
        "@c: 578437695752307201",
        "@d: 171",
    ] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "{line}:\n{}",
            out.stdout
        );
    }
}

#[test]
fn members_of_a_syscalls_user_pointer_are_read() {
    require_root!();
    testgate::require!(
        has_btf(),
        "this kernel has no BTF, which struct members need"
    );
    // bpftrace's naptime.bt reads `args->rqtp->tv_sec`: user memory, typed
    // by the tracepoint's format (`struct __kernel_timespec * rqtp`).
    let out = trace_workload(
        "tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { @[args->rqtp->tv_sec, args->rqtp->tv_nsec] = count(); }",
        "nanosleep 1234567 3",
        &[],
    );
    assert!(
        out.stdout.lines().any(|l| l == "@[0, 1234567]: 3"),
        "{}",
        out.stdout
    );
}
