//! Clocks: `nsecs` (nanoseconds since boot, CLOCK_MONOTONIC, as
//! `bpf_ktime_get_ns` reads it), `nsecs(clock)` (the kernel clock named:
//! `monotonic`, `boot` (CLOCK_BOOTTIME, which counts suspended time too; the
//! default of bpftrace's current release), `tai`, or `sw_tai`, which weft
//! reads from the same kernel TAI clock as `tai`), `elapsed` (nanoseconds
//! since weft started) and `jiffies` (the kernel's 64-bit tick count,
//! `bpf_jiffies64`). All `uint64`.
//!
//! Example: `tracepoint:syscalls:sys_enter_read { @start[tid] = nsecs; }`
//!
//! Lowering: `codegen::lower::builtins::clock`.

use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef, VariableDef};
use crate::config::ScriptConfig;
use crate::diagnostics as diag;
use crate::providers::Context;
use crate::typed::CallValue;
use crate::types::Type;

pub const NSECS: VariableDef = VariableDef {
    name: "nsecs",
    numbered: false,
    help: "nanoseconds since boot (CLOCK_MONOTONIC)",
    ty,
};

pub const ELAPSED: VariableDef = VariableDef {
    name: "elapsed",
    numbered: false,
    help: "nanoseconds since weft started",
    ty,
};

pub const JIFFIES: VariableDef = VariableDef {
    name: "jiffies",
    numbered: false,
    help: "the kernel's tick count (64-bit jiffies)",
    ty,
};

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::U64)
}

/// `nsecs([clock])`: the time by a kernel clock; without one, `boot`, as
/// bpftrace's current release has it.
pub const NSECS_FN: FunctionDef = FunctionDef {
    name: "nsecs",
    signature: "nsecs([monotonic | boot | tai | sw_tai])",
    help: "nanoseconds by a kernel clock: monotonic, boot (the default), tai or sw_tai",
    check: check_nsecs,
    aggregates: false,
};

/// The clocks `nsecs()` reads, in the order of the constant the lowering gets.
pub const CLOCKS: [&str; 4] = ["monotonic", "boot", "tai", "sw_tai"];

fn check_nsecs(cx: &mut CallCheck<'_, '_>) -> Type {
    let clock = match cx.args {
        [] => 1,
        [arg] => match &arg.kind {
            ExprKind::Ident(name) => match CLOCKS.iter().position(|c| c == name) {
                Some(i) => i,
                None => {
                    cx.error(diag::unknown_clock(arg.span, name, &CLOCKS));
                    1
                }
            },
            _ => {
                cx.check(arg);
                cx.error(diag::unknown_clock(arg.span, "", &CLOCKS));
                1
            }
        },
        _ => {
            // Clock names are not expressions: nothing to check in them.
            cx.wrong_arg_count("at most one clock");
            1
        }
    };
    cx.set_value(CallValue::Constant(clock as i64));
    Type::U64
}
