//! The programs a small stream compiles to (as `weft -d bpf` prints them).
//! Bless with `INSTA_UPDATE=always cargo test -p codegen --test streams`.

use ktypes::FixtureKernel;

mod common;

fn lower(src: &str) -> String {
    let compiled = common::compile_on(src, &FixtureKernel::typical());
    let spec = &compiled.manifest.streams[0];
    let mut out = format!(
        "record {} bytes, state map {}, links {:?}, counters {}\n",
        spec.record_size, spec.state_map, spec.links, spec.counters_map
    );
    for f in &spec.fields {
        out.push_str(&format!("field ${} at {}\n", f.name, f.field.offset));
    }
    out + &common::disasm(&compiled)
}

/// Snapshot name for the calling test.
macro_rules! function_name {
    () => {{
        fn f() {}
        let name = std::any::type_name_of_val(&f);
        name.trim_end_matches("::f")
            .rsplit("::")
            .next()
            .unwrap_or(name)
            .to_string()
    }};
}

#[test]
fn begin_and_end_by_tid_with_fields() {
    let src = "stream rr {\n  begin tracepoint:syscalls:sys_enter_read by tid { $fd = args->fd; }\n  end tracepoint:syscalls:sys_exit_read by tid { $bytes = args->ret; }\n}";
    insta::assert_snapshot!(function_name!(), lower(src), src);
}

#[test]
fn a_linked_key_and_a_handler() {
    let src = "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid\n  stage tracepoint:sched:sched_switch by tid link args->next_comm as comm\n  end tracepoint:sched:sched_wakeup by args->comm as comm\n}\nstream:s { @ = hist(args->duration); }";
    insta::assert_snapshot!(function_name!(), lower(src), src);
}

/// The begin program reads the task's comm and cgroup only when something
/// can show them: a record that is emitted (no handler, `emit()`, or
/// `incomplete`), or `args->comm` / `args->cgroup` in a handler.
#[test]
fn comm_and_cgroup_are_captured_only_when_something_shows_them() {
    let stream = "stream s {\n  begin tracepoint:syscalls:sys_enter_read by tid\n  end tracepoint:syscalls:sys_exit_read by tid\n";
    let captures = |rest: &str| {
        let src = format!("{stream}{rest}");
        let code = lower(&src);
        let comm = code.contains("bpf_get_current_comm");
        let cgroup = code.contains("bpf_get_current_cgroup_id");
        assert_eq!(comm, cgroup, "comm and cgroup go together:\n{src}\n{code}");
        comm
    };
    assert!(captures("}"), "no handler: every record is printed");
    assert!(captures("}\nstream:s { emit(); }"));
    assert!(captures("}\nstream:s { @[args->comm] = count(); }"));
    assert!(captures("}\nstream:s { @[args->cgroup] = count(); }"));
    assert!(captures(
        "}\nstream:s /args->comm == \"x\"/ { @ = count(); }"
    ));
    assert!(captures(
        "  timeout 1s\n  incomplete\n}\nstream:s { @ = hist(args->duration); }"
    ));
    assert!(!captures("}\nstream:s { @ = hist(args->duration); }"));
    assert!(!captures(
        "}\nstream:s { @[args->pid, args->tid] = count(); }"
    ));
}

#[test]
fn sampled_begin_draws_before_writing_anything() {
    let src = "stream s {\n  begin tracepoint:syscalls:sys_enter_getppid by tid\n  end tracepoint:syscalls:sys_exit_getppid by tid\n  sample 10\n}";
    let compiled = common::compile_on(src, &FixtureKernel::typical());
    assert_eq!(compiled.manifest.streams[0].sample, 10);
    insta::assert_snapshot!(function_name!(), lower(src), src);
}

/// `queue N`: the begin numbers its instance with a fetch-add on the key's
/// counters (and another pushes out the oldest of a full queue), and the
/// end claims the oldest number the same way, in each of its 4 tries (and
/// counts its hit with one more, whose old value says whether it was first).
#[test]
fn queued_begin_and_end_number_their_instances() {
    let src = "stream s {\n  begin tracepoint:syscalls:sys_enter_getppid by pid\n  end tracepoint:syscalls:sys_exit_getppid by pid\n  queue 8\n}";
    let compiled = common::compile_on(src, &FixtureKernel::typical());
    let spec = &compiled.manifest.streams[0];
    assert_eq!((spec.queue, spec.queue_map.as_str()), (8, "queue_s"));
    let out = lower(src);
    assert_eq!(out.matches("= fetch_add(").count(), 2 + 4 + 1, "{out}");
    insta::assert_snapshot!(function_name!(), out, src);
}
