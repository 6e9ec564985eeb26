//! Kernel tests of `uptr()`/`kptr()` on the workload: the pointer keeps its
//! value and type, so `str(uptr(args->filename))` reads the user-space
//! path a syscall was given, and `kptr(curtask)` reads the task's members.

mod common;

use common::trace_workload;

#[test]
fn uptr_and_kptr_read_through_the_pointer_they_are_given() {
    require_root!();
    let script = "tracepoint:syscalls:sys_enter_openat /pid == cpid && strcontains(str(args->filename), \"/dev/\")/ { @[str(uptr(args->filename)), kptr(curtask)->pid == tid, uptr(args->filename) == args->filename] = count(); }";
    let out = trace_workload(script, "openat /dev/null 2", &[]);
    assert_eq!(
        out.stdout, "\n\n@[/dev/null, true, true]: 2\n",
        "stderr:\n{}",
        out.stderr
    );
}
