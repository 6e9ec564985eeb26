//! `bswap(n)`: `n` with its bytes in reverse order.
//!
//! What it does: reverses the bytes of an integer over the width of its
//! type, so a `__be16` port (`args->dport`, a `uint16` variable) swaps two
//! bytes and a 64-bit value eight, and gives an unsigned integer of that
//! width, as bpftrace does.
//!
//! Example: `kprobe:tcp_connect { @[bswap(((struct sock *)arg0)->__sk_common.skc_dport)] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::bswap` (shifts and masks, one byte at a time).

use super::{CallCheck, FunctionDef};
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "bswap",
    signature: "bswap(n)",
    help: "n with its bytes reversed, over the width of its integer type",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let [arg] = cx.args else {
        cx.check_all();
        cx.wrong_arg_count("one integer");
        return Type::U64;
    };
    let t = cx.check(arg);
    cx.expect_int(arg, &t, "bswap()");
    // The width of the argument's type: a `__be16` port swaps two bytes.
    let size = match t {
        Type::Int { size, .. } => size,
        _ => 8,
    };
    cx.set_value(CallValue::Constant(i64::from(size)));
    Type::Int {
        size,
        signed: false,
    }
}
