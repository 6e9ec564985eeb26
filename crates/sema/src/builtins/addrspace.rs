//! `uptr(p)` and `kptr(p)`: `p` marked as a user-space or a kernel
//! address, its type unchanged, as bpftrace's current release has them.
//!
//! What they do: in bpftrace the mark chooses the helper that reads
//! through the pointer (`bpf_probe_read_user` or `_kernel`). weft reads
//! through `bpf_probe_read`/`bpf_probe_read_str`, which on x86-64 (where
//! user and kernel addresses do not overlap) read either space by the
//! address itself, so the mark changes nothing there and the value is
//! the pointer as given. An integer is taken too (an address held in a
//! `uint64`).
//!
//! Example: `tracepoint:syscalls:sys_enter_openat { printf("%s\n", str(uptr(args.filename))); }`
//!
//! Lowering: `codegen::lower::builtins::addrspace` (the argument's value).

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const UPTR: FunctionDef = FunctionDef {
    name: "uptr",
    signature: "uptr(T *p)",
    help: "p marked as a user-space address (its type unchanged)",
    check,
    aggregates: false,
};

pub const KPTR: FunctionDef = FunctionDef {
    name: "kptr",
    signature: "kptr(T *p)",
    help: "p marked as a kernel address (its type unchanged)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let name = cx.name;
    let [arg] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("one pointer");
        return Type::U64;
    };
    let t = cx.check(arg);
    match t {
        Type::Pointer { .. } | Type::Int { .. } => t,
        t => {
            cx.expect_int(arg, &t, &format!("{name}()"));
            Type::U64
        }
    }
}
