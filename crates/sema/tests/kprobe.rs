//! kprobe, kretprobe, fentry/fexit and rawtracepoint attach points against a
//! fixture kernel (a function list and a tiny BTF blob): what each resolves
//! to, the types of `argN`/`retval`/`args->NAME`, and each mistake's diagnostic.

use ktypes::FixtureKernel;
use sema::{CheckOptions, check, print_types};
use source::{SourceMap, render_all};

fn run_on(src: &str, kernel: &FixtureKernel, types: bool) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) = syntax::parse(map.file(id));
    let (typed, sema_diags) = check(&program, kernel, &CheckOptions::default());
    diags.extend(sema_diags.iter().cloned());
    if diags.has_errors() {
        return render_all(diags.iter(), &map);
    }
    let mut out = String::new();
    for p in &typed.probes {
        out.push_str(&format!(
            "{} [{}] {:?}\n",
            p.resolved.name, p.resolved.section, p.resolved.attach
        ));
    }
    if types {
        out.push_str(&print_types(&typed));
    }
    out
}

fn run(src: &str) -> String {
    run_on(src, &FixtureKernel::typical(), false)
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), run($src), $src);
        }
    };
    ($name:ident, $src:expr, types) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(
                stringify!($name),
                run_on($src, &FixtureKernel::typical(), true),
                $src
            );
        }
    };
}

case!(
    kprobe_and_kretprobe,
    "kprobe:vfs_read { @[func] = sum(arg2); } kretprobe:vfs_read { @r = hist(retval); }"
);
case!(
    kprobe_offset_module_and_alias,
    "kprobe:vfs_read+16, k:ext4:ext4_file_open, kr:ksys_read { @ = count(); }"
);
case!(
    kprobe_wildcard,
    "kprobe:vfs_*, kprobe:ext4:* { @[func] = count(); }"
);
case!(
    fentry_typed_args,
    "fentry:vfs_read { @[args->count] = count(); @f[func] = sum(args->file); }",
    types
);
case!(
    fexit_retval_is_typed,
    "kretfunc:do_sys_openat2 { @[args->dfd] = sum(retval); }",
    types
);
case!(fentry_wildcard, "kfunc:vfs_* { @ = count(); }");
case!(
    rawtracepoint_args,
    "rawtracepoint:sys_enter { @[arg1] = count(); } rt:sched_switch { @s[args->prev_state] = count(); }",
    types
);
case!(
    rawtracepoint_wildcard,
    "rawtracepoint:sched_* { @ = count(); }"
);

case!(err_unknown_kernel_function, "kprobe:vfs_raed { }");
case!(err_offset_on_kretprobe, "kretprobe:vfs_read+4 { }");
case!(err_offset_on_fentry, "fentry:vfs_read+4 { }");
case!(err_bad_kprobe_attach_point, "kprobe:a:b:c { }");
case!(err_kprobe_wildcard_matches_nothing, "kprobe:zzz_* { }");
case!(err_retval_in_kprobe, "kprobe:vfs_read { @ = retval; }");
case!(err_arg_in_kretprobe, "kretprobe:vfs_read { @ = arg0; }");
case!(err_args_in_kprobe, "kprobe:vfs_read { @ = args->count; }");
case!(err_arg_in_fentry, "fentry:vfs_read { @ = arg0; }");
case!(err_retval_in_fentry, "fentry:vfs_read { @ = retval; }");
case!(
    err_fentry_unknown_param,
    "fentry:vfs_read { @ = args->cnt; }"
);
case!(err_fentry_function_without_btf, "fentry:ksys_read { }");
case!(err_unknown_raw_tracepoint, "rawtracepoint:sys_entr { }");
case!(
    err_raw_tracepoint_arg_out_of_range,
    "rawtracepoint:sys_enter { @ = arg2; }"
);

#[test]
fn fentry_and_raw_args_without_btf() {
    let bare = FixtureKernel::new()
        .with_tracepoint(
            "raw_syscalls",
            "sys_enter",
            "name: sys_enter\nID: 1\nformat:\n\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\nprint fmt: \"\"\n",
        )
        .with_kernel_functions(&["vfs_read"]);
    let out = [
        "fentry:vfs_read { }",
        "rawtracepoint:sys_enter { @[arg1] = count(); }",
        "rawtracepoint:sys_enter { @ = args->id; }",
        "kprobe:vfs_read { @ = arg0; }",
    ]
    .map(|src| run_on(src, &bare, false))
    .join("\n");
    insta::assert_snapshot!(out);
}
