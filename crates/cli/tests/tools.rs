//! bpftrace's shipped tools (`/usr/sbin/*.bt` from Debian's bpftrace
//! package), run for real, and the defects they found (issue 16).
//!
//! The scripts are read from the installed package, never copied here. When
//! the package is missing a test says it skipped; in CI (`CI` or
//! `WEFT_KERNEL_TESTS=1` set, where `scripts/setup.sh` installs it) a
//! missing package fails the test instead (`testgate`).

mod common;

use std::time::Duration;

use common::{KprobesOnly, compile};
use ktypes::KernelInfo;
use runtime::{LoadOptions, Session, SysKernelInfo};

/// Whether the running kernel has BTF.
fn has_btf() -> bool {
    SysKernelInfo::new().btf().is_ok()
}

/// The text of the shipped tool `name` (`execsnoop`), or `None` when the
/// package is missing (the gate says so, and fails the test in CI, where
/// `scripts/setup.sh` installs it).
fn shipped_tool(name: &str) -> Option<String> {
    let path = format!("/usr/sbin/{name}.bt");
    std::fs::read_to_string(&path).ok()
}

/// Returns from the calling test unless bpftrace's tools are installed.
macro_rules! require_tools {
    () => {
        testgate::require!(
            shipped_tool("execsnoop").is_some(),
            "bpftrace's tools (/usr/sbin/*.bt) are not installed: apt-get install bpftrace"
        );
    };
}

/// Defect 2: a struct inside a false `#ifndef BPFTRACE_HAVE_BTF` group is
/// skipped, as bpftrace's preprocessor skips it; the output is bpftrace's,
/// byte for byte.
#[test]
fn a_struct_in_a_false_ifndef_group_is_skipped() {
    require_root!();
    let path = common::scratch("ifn.bt");
    std::fs::write(
        &path,
        "#ifndef BPFTRACE_HAVE_BTF\nstruct foo { int a; };\n#endif\nBEGIN { printf(\"ok\\n\"); exit(); }\n",
    )
    .unwrap();
    let out = common::run_weft(&[path.to_str().unwrap()], Duration::from_secs(20));
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "Attaching 1 probe...\nok\n\n\n");
}

/// The tools bpftrace ships (`/usr/sbin/*.bt` from Debian's package) that
/// this kernel has every probe of: each compiles as written, with its
/// headers' constants, struct pointers in variables, `bswap()` and `ntop()`
/// of IPv6 byte arrays, and passes this kernel's verifier (kprobes load
/// here; only attaching them fails).
#[test]
fn bpftrace_tools_compile_and_pass_the_verifier() {
    require_root!();
    testgate::require!(has_btf(), "this kernel has no BTF, which these tools need");
    require_tools!();
    let kernel = KprobesOnly(SysKernelInfo::new());
    let tools = [
        "bashreadline",
        "bitesize",
        "capable",
        "cpuwalk",
        "execsnoop",
        "gethostlatency",
        "killsnoop",
        "naptime",
        "oomkill",
        "opensnoop",
        "pidpersec",
        "setuids",
        "statsnoop",
        "syncsnoop",
        "syscount",
        "tcpaccept",
        "tcpconnect",
        "tcpdrop",
        "tcplife",
        "tcpretrans",
        "tcpsynbl",
        "undump",
        "vfscount",
        "vfsstat",
        "writeback",
        "xfsdist",
    ];
    let mut checked = 0;
    for tool in tools {
        let path = format!("/usr/sbin/{tool}.bt");
        let src = shipped_tool(tool).unwrap_or_else(|| panic!("{path} is missing"));
        let compiled = compile(&src, &kernel);
        Session::load(&compiled.elf, &compiled.manifest, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{path}: the verifier must accept it: {e}"));
        checked += 1;
    }
    assert_eq!(checked, tools.len());
}

/// loads.bt's `kaddr()` and unary `*`: `kaddr("vfs_read")` is the address
/// /proc/kallsyms lists, and `*` reads through a user pointer the value the
/// workload put there (a `uint64` for an integer address, the pointee's
/// width for a typed pointer).
#[test]
fn kaddr_and_unary_star_read_kernel_and_user_memory() {
    require_root!();
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let vfs_read = kallsyms
        .lines()
        .find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.get(2) == Some(&"vfs_read")).then(|| u64::from_str_radix(w[0], 16).unwrap())
        })
        .expect("vfs_read in /proc/kallsyms");
    let out = common::trace_workload(
        "tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { @addr = kaddr(\"vfs_read\"); @ns[*(args->rqtp + 8)] = count(); @ns16[*(int16 *)(args->rqtp + 8)] = count(); @sec[*(uint64 *)args->rqtp] = count(); }",
        "nanosleep 1234567 3",
        &[],
    );
    // 1234567 is 0x12d687: its low 16 bits are -10617 as an int16.
    for line in [
        format!("@addr: {vfs_read}"),
        "@ns[1234567]: 3".into(),
        "@ns16[-10617]: 3".into(),
        "@sec[0]: 3".into(),
    ] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "expected `{line}` in:\n{}",
            out.stdout
        );
    }
}

/// runqlen.bt's and dcsnoop.bt's C struct definitions: a struct the script
/// defines overlays memory as C lays it out (here the workload's `struct
/// timespec`, read through nanosleep's user pointer, under a name of the
/// script's own), and `sizeof`/`offsetof` see the same layout.
#[test]
fn a_script_struct_reads_the_memory_it_describes() {
    require_root!();
    let out = common::trace_workload(
        "struct wl_ts { char pad[3]; long sec_low_bytes_skipped; };\nstruct wl_timespec { long sec; long nsec; };\ntracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { $t = (struct wl_timespec *)args->rqtp; @[$t->sec, $t->nsec] = count(); @size = sizeof(struct wl_timespec); @off = offsetof(struct wl_timespec, nsec); @pad = sizeof(struct wl_ts); }",
        "nanosleep 1234567 3",
        &[],
    );
    for line in ["@[0, 1234567]: 3", "@size: 16", "@off: 8", "@pad: 16"] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "expected `{line}` in:\n{}",
            out.stdout
        );
    }
}
