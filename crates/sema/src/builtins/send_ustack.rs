//! `send_ustack([top])`: sends the current task's user registers (ip, sp,
//! bp) and a copy of its user stack from sp up to user space, which unwinds
//! it with the DWARF call-frame information of the mapped files. It is what
//! `weft profile` and `weft offcpu` use for stacks through code built
//! without frame pointers (libc, libm, plain `-O2`), which `ustack`'s
//! frame-pointer walk cannot follow.
//!
//! What it does: copies up to `abi::stack::USTACK_COPY_MAX` bytes; `top`
//! (an address, e.g. `curtask->mm->start_stack` for a main thread) bounds
//! the copy when sp is below it and within that size, so a shallow stack
//! costs only its depth. Where the full size cannot be read (a thread's
//! stack ends sooner) it copies less, down to the end of sp's page.
//!
//! Why it is limited: the record goes to user space, so it is a statement
//! with no value; only a task's probes have a user stack (a kernel thread
//! sends an empty copy).
//!
//! Example: `profile:hz:99 /pid == 42/ { send_ustack(); }`
//!
//! Lowering: `codegen::lower::builtins::send_ustack`.

use super::{CallCheck, FunctionDef};
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "send_ustack",
    signature: "send_ustack([top])",
    help: "sends the user registers and a copy of the user stack (up to address top) for DWARF unwinding in user space",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    match cx.args {
        [] => {}
        [top] => {
            let t = cx.check(top);
            cx.expect_int(top, &t, "send_ustack()'s top");
        }
        _ => {
            cx.check_all();
            cx.wrong_arg_count("no argument or the stack's top address");
        }
    }
    Type::Void
}
