//! Issue 22: bpftrace's current tools and documented examples, checked
//! against a fixture kernel. Each case is a script of our own with the
//! construct a tool or an example of the current release uses; the
//! snapshot shows its types, or its diagnostics.

#[macro_use]
mod common;

case!(
    a_map_fed_pointers_that_differ_only_by_const_keeps_its_pointer_type,
    "tracepoint:syscalls:sys_enter_openat { @p[tid] = args.filename; } tracepoint:syscalls:sys_enter_read { @p[tid] = args.buf; } tracepoint:syscalls:sys_exit_read { $s = str(@p[tid]); }"
);
case!(
    func_shares_a_map_with_ksym,
    "kprobe:vfs_read { @name[tid] = func; } kretprobe:vfs_read { @name[0] = ksym(0); printf(\"%s\\n\", @name[tid]); }"
);
