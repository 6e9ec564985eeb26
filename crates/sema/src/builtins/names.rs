//! `strerror(errno)`, `signal_name(sig)` and `syscall_name(nr)`: a number
//! printed as its name, as bpftrace's current release prints them
//! (`Operation not permitted`, `Interrupt`, `read`); a negative errno
//! (`-EPERM`, as the kernel returns it) reads as its errno, an unknown one
//! as `Unknown error`, a signal past 64 as `N/A`, a number no system call
//! of this machine has as `Unknown syscall`.
//!
//! What the program keeps is the number (8 bytes, read as a C `int`), so
//! the name costs nothing in the kernel and can key a map; user space
//! prints it from its tables (`output::names`). It prints where a string
//! does (`print`, `%s`, map keys and values), but is not a string: it
//! cannot be compared or sliced.
//!
//! Example: `tracepoint:syscalls:sys_exit_openat /args->ret < 0/ { @[strerror(-args->ret)] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::names` (the number, stored).

use abi::NameTable;

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const STRERROR: FunctionDef = FunctionDef {
    name: "strerror",
    signature: "strerror(errno)",
    help: "the error number's text (Operation not permitted), printed in user space",
    check: check_strerror,
    aggregates: false,
};

pub const SIGNAL_NAME: FunctionDef = FunctionDef {
    name: "signal_name",
    signature: "signal_name(sig)",
    help: "the signal number's name (Interrupt), printed in user space",
    check: check_signal_name,
    aggregates: false,
};

pub const SYSCALL_NAME: FunctionDef = FunctionDef {
    name: "syscall_name",
    signature: "syscall_name(nr)",
    help: "the name of system call number NR on this machine (read), printed in user space",
    check: check_syscall_name,
    aggregates: false,
};

fn check_syscall_name(cx: &mut CallCheck<'_, '_>) -> Type {
    check(cx, NameTable::Syscall, "syscall_name()")
}

fn check_strerror(cx: &mut CallCheck<'_, '_>) -> Type {
    check(cx, NameTable::Errno, "strerror()")
}

fn check_signal_name(cx: &mut CallCheck<'_, '_>) -> Type {
    check(cx, NameTable::Signal, "signal_name()")
}

fn check(cx: &mut CallCheck<'_, '_>, table: NameTable, what: &str) -> Type {
    let [n] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("one integer");
        return Type::Named(table);
    };
    let t = cx.check(n);
    cx.expect_int(n, &t, what);
    Type::Named(table)
}
