//! `debugf(fmt, args...)` (rule in `sema::builtins::debugf`): the format
//! with its NUL on the stack, then `bpf_trace_printk(fmt, size, a, b, c)`
//! for up to three arguments, or `bpf_trace_vprintk(fmt, size, data, 8n)`
//! with the arguments as an array of `u64`s. An integer is passed as its
//! value, a string as its address (the kernel copies it when formatting).

use sema::Type;

use super::{CallSite, Lowering};
use crate::asm::{Helper, Src, VReg, Width};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "debugf",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    let Some((first, rest)) = call.args.split_first() else {
        return;
    };
    let Some(text) = sema::builtins::printf::literal_string(first) else {
        return;
    };
    let mut format = text.to_vec();
    format.push(0);
    let values: Vec<VReg> = rest.iter().map(|arg| argument(l, arg)).collect();
    let place = l.value_place(format.len() as u32);
    l.write_bytes(&format, place);
    let fmt = l.addr(place);
    l.set_span(call.expr.span);
    let size = Src::Imm(format.len() as i32);
    if values.len() <= sema::builtins::debugf::PRINTK_ARGS {
        let mut args = vec![Src::Reg(fmt), size];
        args.extend(values.iter().map(|v| Src::Reg(*v)));
        l.asm.call(Helper::TRACE_PRINTK, &args, None);
        return;
    }
    let data = l.value_place(values.len() as u32 * 8);
    for (i, v) in values.iter().enumerate() {
        l.store(data.offset(i as u32 * 8), Src::Reg(*v), Width::DW);
    }
    let data_addr = l.addr(data);
    l.asm.call(
        Helper::TRACE_VPRINTK,
        &[
            Src::Reg(fmt),
            size,
            Src::Reg(data_addr),
            Src::Imm(values.len() as i32 * 8),
        ],
        None,
    );
}

/// An argument as the kernel's formatter takes it: a string's address, an
/// integer's value.
fn argument(l: &mut Lower<'_>, arg: &syntax::ast::Expr) -> VReg {
    if matches!(l.ty(arg), Type::Str { .. }) {
        let (place, _) = l.mem(arg);
        l.addr(place)
    } else {
        l.scalar(arg)
    }
}
