//! Struct members through BTF (`->`, `.`, casts to struct pointers,
//! `curtask`) and kernel function probes running through the other
//! mechanism, against the fixture kernel's BTF: the types they get and each
//! mistake's diagnostic.

use ktypes::{FixtureKernel, TracingFeatures};
use sema::{CheckOptions, check, print_types};
use source::{SourceMap, render_all};

fn run_on(src: &str, kernel: &FixtureKernel) -> String {
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
    out.push_str(&print_types(&typed));
    out
}

fn run(src: &str) -> String {
    run_on(src, &FixtureKernel::typical())
}

/// BTF and kprobes, but no BPF trampolines.
fn no_trampolines() -> FixtureKernel {
    FixtureKernel::typical().with_tracing_features(TracingFeatures::from_flags(true, false, true))
}

/// BTF and BPF trampolines, but no kprobes.
fn no_kprobes() -> FixtureKernel {
    FixtureKernel::typical().with_tracing_features(TracingFeatures::from_flags(true, true, false))
}

/// BTF, but neither kprobes nor BPF trampolines (this machine's kernel).
fn neither() -> FixtureKernel {
    FixtureKernel::typical().with_tracing_features(TracingFeatures::from_flags(true, false, false))
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), run($src), $src);
        }
    };
    ($name:ident, $src:expr, $kernel:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), run_on($src, &$kernel), $src);
        }
    };
}

case!(
    members_through_fentry_args_casts_and_curtask,
    "fentry:vfs_read { @name[str(args->file->f_path.dentry->d_name.name)] = count(); @pos = sum(args->file->f_pos); @len = sum(args->file->f_path.dentry->d_name.len); }
     kprobe:vfs_read { @k[str(((struct file *)arg0)->f_path.dentry->d_name.name)] = count(); $m = ((struct file *)arg0)->f_mode; }
     tracepoint:sched:sched_wakeup { @t[curtask->tgid == pid, ((struct task_struct *)curtask)->comm] = count(); @p = max(curtask->pid); }
     kprobe:do_sys_openat2 { @ip[ntop(((struct sockaddr_in *)arg1)->sin_addr.s_addr)] = count(); }"
);
case!(
    unknown_struct_with_suggestion,
    "kprobe:vfs_read { @ = sum(((struct fil *)arg0)->f_pos); }"
);
case!(
    unknown_member_with_suggestion,
    "kprobe:vfs_read { @ = sum(((struct file *)arg0)->f_mod); }"
);
case!(
    unknown_member_in_anonymous_union,
    "fentry:vfs_read { @ = sum(args->file->f_path.dentry->d_name.hash_lne); }"
);
case!(
    arrow_on_a_non_pointer,
    "kprobe:vfs_read { @ = sum(arg0->f_pos); }"
);
case!(
    arrow_on_a_char_pointer,
    "fentry:vfs_read { @ = sum(args->buf->x); }"
);
case!(
    dot_reads_through_a_pointer,
    "fentry:vfs_read { @ = sum(args->file.f_pos); }"
);
case!(
    dot_on_a_pointer_to_no_struct,
    "fentry:vfs_read { @ = sum(args->buf.x); }"
);
case!(
    a_bitfield_is_read_as_its_bits,
    "tracepoint:sched:sched_wakeup { @ = sum(curtask->in_iowait); }"
);
case!(
    struct_member_held_by_value,
    "fentry:vfs_read { @ = args->file->f_path; }"
);
case!(
    fentry_runs_as_kprobe_without_trampolines,
    "fentry:vfs_read { @[args->count] = sum(args->pos); } fexit:vfs_read { @r = hist(retval); }",
    no_trampolines()
);
case!(
    fexit_args_rejected_when_it_runs_as_kretprobe,
    "fexit:vfs_read { @r[args->count] = hist(retval); }",
    no_trampolines()
);
case!(
    kprobe_runs_as_fentry_without_kprobes,
    "kprobe:do_sys_openat2 { @[arg0] = count(); $f = str(arg1); } kretprobe:vfs_read { @r = sum(retval); }",
    no_kprobes()
);
case!(
    kprobe_offset_cannot_run_as_fentry,
    "kprobe:vfs_read+4 { @ = sum(arg2); }",
    no_kprobes()
);
case!(
    kprobe_as_fentry_has_no_named_args,
    "kprobe:vfs_read { @ = sum(args->count); }",
    no_kprobes()
);
case!(
    kprobe_as_fentry_argn_past_the_parameters,
    "kprobe:vfs_read { @ = sum(arg5); }",
    no_kprobes()
);
case!(
    pointer_kept_in_a_variable_and_kernel_enumerators,
    "kprobe:vfs_read { $f = (struct file *)arg0; @n[str($f->f_path.dentry->d_name.name)] = count(); $d = $f->f_path.dentry; @l = sum($d->d_name.len); @s[TCP_FIN_WAIT1, WEFT_BELOW_ZERO] = count(); }"
);
case!(
    err_unknown_identifier_is_no_enumerator,
    "kprobe:vfs_read { @ = TCP_NO_SUCH_STATE; }"
);
case!(
    kprobe_on_a_kernel_with_neither_mechanism,
    "kprobe:vfs_read { @ = count(); } kretprobe:vfs_read { @r = hist(retval); }",
    neither()
);
case!(
    fentry_on_a_kernel_with_neither_mechanism,
    "fentry:vfs_read { @ = count(); } fexit:no_such_syscall_fn { @r = hist(retval); }",
    neither()
);
