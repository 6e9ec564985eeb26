//! Builtins on kernel sockets and packets (issue 14): `socket_cookie`,
//! which the kernel gives only to BTF-typed tracing programs (a
//! `rawtracepoint` probe that calls it loads as one), and `skboutput`.
//! Accepted programs show their types; rejected ones the rendered
//! diagnostics.

#[macro_use]
mod common;

case!(
    socket_cookie_of_a_raw_tracepoint_argument_is_a_u64,
    "rawtracepoint:sched_switch { @[socket_cookie(args.prev)] = count(); $c = socket_cookie((struct task_struct *)arg2); }"
);
case!(
    socket_cookie_needs_a_tracing_program_and_a_pointer,
    "tracepoint:syscalls:sys_enter_read { $a = socket_cookie(args->fd); } rawtracepoint:sys_enter { $b = socket_cookie(); $c = socket_cookie(arg1); }"
);
case!(
    skboutput_takes_a_file_a_socket_buffer_a_length_and_an_offset,
    "rawtracepoint:sched_switch { $r = skboutput(\"out.pcap\", args.prev, 64, 14); @[skboutput(\"out.pcap\", args.prev, 1, 0)] = count(); }"
);
case!(
    skboutput_needs_literals_a_pointer_and_a_tracing_program,
    "tracepoint:syscalls:sys_enter_read { skboutput(\"a.pcap\", args->buf, 1, 0); } rawtracepoint:sys_enter { $f = \"x\"; skboutput($f, arg1, \"n\", $f); skboutput(\"a.pcap\"); }"
);
