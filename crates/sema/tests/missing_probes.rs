//! Issue 16, defect 3: an attach point that does not exist here.
//!
//! Without a setting, a missing attach point in a list of several is a
//! warning that names it, and the probe runs with the rest; it is an error
//! when none of them exists or when it is alone. `config = { missing_probes
//! = "error" | "warn" | "ignore" }` chooses instead, as in bpftrace's
//! current release. A library lacking a symbol that a library it needs
//! defines (glibc 2.34's `libpthread.so.0` and `pthread_create`) is probed
//! there, with a warning saying where.
//!
//! Each snapshot shows the rendered diagnostics (warnings included) and
//! then the probes that resolved.

use ktypes::FixtureKernel;
use sema::{CheckOptions, MissingProbes, check};
use source::{SourceMap, render_all};
use uelf::testing::tiny_library;

fn kernel() -> FixtureKernel {
    FixtureKernel::typical()
        // An empty libpthread that needs libc, which defines pthread_create.
        .with_file(
            "/lib/x86_64-linux-gnu/libpthread.so.0",
            tiny_library(&["__libpthread_version_placeholder"], &[], &["libc.so.6"]),
        )
        .with_file(
            "/lib/x86_64-linux-gnu/libc.so.6",
            tiny_library(&["malloc", "pthread_create"], &[], &[]),
        )
}

fn run_with(src: &str, env: Option<MissingProbes>) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) = syntax::parse(map.file(id));
    let env = env.map(|m| {
        let name = match m {
            MissingProbes::Error => "error",
            MissingProbes::Warn => "warn",
            MissingProbes::Ignore => "ignore",
        };
        ("BPFTRACE_MISSING_PROBES".to_string(), name.to_string())
    });
    let opts = CheckOptions {
        env: env.into_iter().collect(),
        ..CheckOptions::default()
    };
    let (typed, sema_diags) = check(&program, &kernel(), &opts);
    diags.extend(sema_diags.iter().cloned());
    let mut out = render_all(diags.iter(), &map);
    if !diags.has_errors() {
        out.push_str("---\n");
        for p in &typed.probes {
            out.push_str(&format!("{}\n", p.resolved.name));
        }
    }
    out
}

fn run(src: &str) -> String {
    run_with(src, None)
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), run($src), $src);
        }
    };
}

// ---- the rule of bpftrace's tools (no setting) ----
case!(
    one_missing_in_a_list_warns_and_the_rest_runs,
    "tracepoint:syscalls:sys_enter_read,\ntracepoint:syscalls:sys_enter_nosuch,\ntracepoint:nosuch:* { @ = count(); }"
);
case!(
    a_missing_kernel_function_in_a_list_warns,
    "kprobe:vfs_read,\nkprobe:__vfs_read { @ = count(); }"
);
case!(
    alone_it_is_an_error,
    "tracepoint:syscalls:sys_enter_nosuch { @ = count(); }"
);
case!(
    none_of_the_list_exists_is_an_error,
    "kprobe:nosuch_a,\nkprobe:nosuch_b { @ = count(); }"
);
case!(
    a_malformed_attach_point_is_an_error_in_a_list,
    "tracepoint:syscalls:sys_enter_read,\ninterval:xs:1 { @ = count(); }"
);

// ---- config = { missing_probes = ... } ----
case!(
    config_error_makes_each_one_an_error,
    "config = { missing_probes = \"error\" }\ntracepoint:syscalls:sys_enter_read,\ntracepoint:syscalls:sys_enter_nosuch { @ = count(); }"
);
case!(
    config_warn_leaves_out_a_probe_with_none,
    "config = { missing_probes = \"warn\" }\ntracepoint:syscalls:sys_enter_nosuch { @a = count(); }\ntracepoint:syscalls:sys_enter_read { @b = count(); }"
);
case!(
    config_ignore_says_nothing,
    "config = { missing_probes = \"ignore\" }\nkprobe:nosuch_a { @a = count(); }\ntracepoint:syscalls:sys_enter_read, kprobe:nosuch_b { @b = count(); }"
);
case!(
    config_bad_value,
    "config = { missing_probes = \"sometimes\" }\nBEGIN { }"
);

// ---- a library that lacks the symbol ----
case!(
    a_symbol_that_moved_to_a_needed_library_is_probed_there,
    "uprobe:libpthread.so.0:pthread_create { @ = count(); }"
);
case!(
    a_symbol_no_library_defines_is_missing,
    "uprobe:libpthread.so.0:pthread_nosuch { @ = count(); }"
);

/// `BPFTRACE_MISSING_PROBES` (passed by the command line) wins over the script.
#[test]
fn the_environment_wins_over_the_script() {
    let src = "config = { missing_probes = \"ignore\" }\ntracepoint:syscalls:sys_enter_read, tracepoint:syscalls:sys_enter_nosuch { }";
    let out = run_with(src, Some(MissingProbes::Error));
    assert!(
        out.contains(": ERROR: ") && out.contains("CODE: E0404"),
        "{out}"
    );
}

// ---- bpftrace's words ----
case!(
    wildcards_that_match_nothing_leave_a_probe_without_attach_points,
    "tracepoint:nosuch:*,\nrawtracepoint:nosuch_raw { @ = count(); }"
);
case!(
    a_raw_tracepoint_of_a_module_is_no_match,
    "rawtracepoint:nonsense:sys_exit { @ = count(); }"
);
case!(
    config_warn_says_skipping_in_bpftraces_words,
    "config = { missing_probes = warn }\ntracepoint:syscalls:sys_enter_read,\ntracepoint:nonsense:nonsense { @ = count(); }"
);
