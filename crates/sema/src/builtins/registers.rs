//! The probed function's registers: `arg0`..`argN`, `retval` and `func`.
//!
//! What they are: the Nth argument, the return value and the probed
//! function's name, in the probes that have them: kprobe/kretprobe (and
//! fentry/fexit running as such), uprobe/uretprobe, usdt (the Nth operand of
//! the site's argument spec, at its size and sign), rawtracepoint (the Nth
//! raw argument), fexit (`retval` typed by BTF). Which probe types each
//! makes sense in, and why not elsewhere, is the providers' typing:
//! `builtins::kprobe` for kernel probes, `builtins::uprobe` for user ones.
//!
//! Example: `uretprobe:/bin/bash:readline { printf("%s\n", str(retval)); }`
//!
//! Lowering: `codegen::lower::builtins::registers`.

use super::{VariableDef, uprobe};
use crate::providers::Context;
use crate::types::Type;
use crate::config::ScriptConfig;

pub const ARG: VariableDef = VariableDef {
    name: "arg",
    numbered: true,
    help: "the Nth argument of the probed function or USDT site (arg0, arg1, ...)",
    ty: arg,
};

pub const RETVAL: VariableDef = VariableDef {
    name: "retval",
    numbered: false,
    help: "the return value (kretprobe, uretprobe, fexit)",
    ty: retval,
};

pub const FUNC: VariableDef = VariableDef {
    name: "func",
    numbered: false,
    help: "the probed function's name",
    ty: func,
};

fn arg(context: &Context, n: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    uprobe::arg_type(n, context)
}

fn retval(context: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    uprobe::retval_type(context)
}

fn func(context: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    uprobe::func_type(context)
}
