//! Kernel tests of kernel function probes and raw tracepoints:
//!
//! - `rawtracepoint:sys_enter` counts the workload's getppid calls by
//!   syscall number (`arg1`), exactly;
//! - on a kernel without kprobes or BPF trampolines (this machine: kprobes
//!   off, fentry loads refused with EPERM), a kprobe/fentry script fails
//!   with one sentence naming what is missing and the syscall tracepoint to
//!   use instead; on a kernel that has them, the same scripts run;
//! - generated kprobe/kretprobe programs pass the verifier (load only, then
//!   attaching fails here only because kprobes are missing).

mod common;

use std::time::Duration;

use common::{run_weft, trace_workload};
use ktypes::KernelInfo;
use runtime::{AttachError, LoadOptions, Session, SysKernelInfo};

/// `__NR_getppid` on x86_64.
const NR_GETPPID: u64 = 110;

#[test]
fn rawtracepoint_counts_syscalls_by_number() {
    require_root!();
    let out = trace_workload(
        "rawtracepoint:sys_enter /pid == cpid/ { @[arg1] = count(); }",
        "getppid 37",
        &[],
    );
    let line = format!("@[{NR_GETPPID}]: 37");
    assert!(
        out.stdout.lines().any(|l| l == line),
        "expected `{line}` in:\n{}",
        out.stdout
    );
}

#[test]
fn rawtracepoint_typed_args_from_btf() {
    require_root!();
    testgate::require!(
        SysKernelInfo::new().btf().is_ok(),
        "this kernel has no BTF, so raw tracepoint arguments have no names"
    );
    let out = trace_workload(
        "rawtracepoint:sys_enter /pid == cpid && args->id == 110/ { @n = count(); }",
        "getppid 12",
        &[],
    );
    assert!(out.stdout.lines().any(|l| l == "@n: 12"), "{}", out.stdout);
}

/// Runs a script that this kernel cannot attach and returns stderr.
fn rejected(script: &str) -> String {
    let out = run_weft(&["-e", script], Duration::from_secs(30));
    assert!(!out.timed_out, "weft timed out");
    assert_eq!(
        out.status,
        Some(1),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    let errors = out.stderr.lines().filter(|l| l.contains("ERROR: ")).count();
    assert_eq!(errors, 1, "one error expected:\n{}", out.stderr);
    out.stderr
}

#[test]
fn kprobe_on_a_kernel_without_kprobes_says_so() {
    require_root!();
    testgate::only_if!(
        !runtime::kernel_features::kprobes(),
        "this kernel has kprobes; the load-only test covers them"
    );
    let err = rejected("kprobe:vfs_read { @ = count(); }");
    assert!(
        err.contains(
            "this kernel cannot attach kprobe probes: it was built without kprobes (CONFIG_KPROBES is off)"
        ),
        "{err}"
    );
    assert!(
        err.contains("HINT: trace the system call instead: tracepoint:syscalls:sys_enter_read"),
        "{err}"
    );
    let err = rejected("kretprobe:vfs_read { @ = hist(retval); }");
    assert!(err.contains("tracepoint:syscalls:sys_exit_read"), "{err}");
}

#[test]
fn fentry_without_trampolines_says_so() {
    require_root!();
    let trampolines = runtime::kernel_features::trampolines();
    testgate::only_if!(
        matches!(trampolines, runtime::Support::No(_)),
        "this kernel loads fentry programs"
    );
    let runtime::Support::No(why) = trampolines else {
        return;
    };
    if runtime::kernel_features::kprobes() {
        // fentry falls back to a kprobe, and `-v` says so.
        let out = run_weft(
            &["-v", "-d", "bpf", "-e", "fentry:vfs_read { @ = count(); }"],
            Duration::from_secs(30),
        );
        assert!(
            out.stderr.contains("fentry runs as a kprobe"),
            "{}",
            out.stderr
        );
        return;
    }
    for (script, kind, tp) in [
        (
            "fentry:vfs_read { @ = count(); }",
            "fentry",
            "sys_enter_read",
        ),
        (
            "kfunc:vfs_read { @ = count(); }",
            "fentry",
            "sys_enter_read",
        ),
        ("fexit:vfs_read { @ = count(); }", "fexit", "sys_exit_read"),
    ] {
        let err = rejected(script);
        let sentence = format!("this kernel cannot attach {kind} probes: {why}");
        assert!(err.contains(&sentence), "{sentence}\n{err}");
        assert!(err.contains(&format!("tracepoint:syscalls:{tp}")), "{err}");
    }
}

/// `-l` lists the kernel functions a probe can attach to through the
/// mechanism it would run as; on a kernel with neither kprobes nor BPF
/// trampolines (this machine) nothing, and stderr says why (it listed
/// 60,587 kallsyms entries as kprobes here).
#[test]
fn listing_kernel_functions_follows_what_can_attach() {
    let kprobes = runtime::kernel_features::kprobes();
    let trampolines = matches!(
        runtime::kernel_features::trampolines(),
        runtime::Support::Yes
    );
    for (pattern, kind) in [
        ("kprobe:*", "kprobe"),
        ("kretprobe:vfs_read", "kretprobe"),
        ("fentry:vfs_r*", "fentry"),
        ("kfunc:vfs_read", "fentry"),
        ("fexit:*", "fexit"),
    ] {
        let out = run_weft(&["-l", pattern], Duration::from_secs(60));
        if kprobes || trampolines {
            assert_eq!(out.status, Some(0), "{pattern}: {}", out.stderr);
            assert!(
                out.stdout
                    .lines()
                    .any(|l| l.starts_with(&format!("{kind}:vfs_read"))),
                "{pattern}: {}",
                out.stdout
            );
            continue;
        }
        assert_eq!(out.status, Some(1), "{pattern}");
        assert_eq!(out.stdout, "", "{pattern}");
        assert!(
            out.stderr.starts_with(&format!(
                "ERROR: this kernel cannot attach {kind} probes, so none are listed: "
            )),
            "{pattern}: {}",
            out.stderr
        );
        assert!(out.stderr.contains("BPF trampolines"), "{}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    }
}

/// Compiled as written (a kprobe stays a kprobe), whatever this kernel can attach.
fn compile(src: &str) -> codegen::Compiled {
    common::compile(src, &ktypes::AsWritten(&SysKernelInfo::new()))
}

#[test]
fn kprobe_programs_pass_the_verifier() {
    require_root!();
    let scripts = [
        "kprobe:vfs_read { @[comm] = count(); @a = sum(arg2); printf(\"%d %d %s\\n\", arg0, arg7, func); }",
        "kretprobe:vfs_read { @h = hist(retval); @[func, tid] = sum(retval); }",
        "kprobe:vfs_read+4 /arg2 > 100/ { @m = max(arg2); $x = arg1; @s[$x] = count(); }",
        "kprobe:ksys_read { @ = lhist(arg2, 0, 1000, 100); } kretprobe:ksys_read { @r = avg(retval); }",
    ];
    let has_kprobes = runtime::kernel_features::kprobes();
    for src in scripts {
        let compiled = compile(src);
        let mut session = Session::load(&compiled.elf, &compiled.manifest, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{src}: the verifier must accept it: {e}"));
        match session.attach() {
            Ok(n) => assert!(
                has_kprobes,
                "{src}: attached {n} kprobes on a kernel without kprobes"
            ),
            Err(e) => {
                assert!(
                    !has_kprobes,
                    "{src}: attach failed on a kernel with kprobes: {e}"
                );
                assert!(
                    matches!(
                        e,
                        AttachError::Unsupported { .. } | AttachError::Other { .. }
                    ),
                    "{src}: {e}"
                );
            }
        }
    }
}

#[test]
fn rawtracepoint_program_loads_and_attaches() {
    require_root!();
    let compiled =
        compile("rawtracepoint:sched_switch { @[arg3] = count(); } rt:sys_exit { @e = count(); }");
    let mut session = Session::load(&compiled.elf, &compiled.manifest, &LoadOptions::default())
        .expect("raw_tp programs load");
    assert_eq!(session.attach().expect("raw_tp programs attach"), 2);
}
