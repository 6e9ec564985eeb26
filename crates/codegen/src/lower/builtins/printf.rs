//! `printf(fmt, args...)`, `cat`, `system`, `errorf` and `warnf` (rules in
//! `sema::builtins::printf`): one ring-buffer record with the arguments at
//! the offsets of the printf's layout (`abi::PrintfSpec`); user space
//! renders the format the manifest carries.

use abi::EventKind;

use super::{CallSite, Lowering};
use crate::asm::Src;
use crate::lower::{Lower, Place, scalar_width};

pub(crate) const PRINTF: Lowering = Lowering {
    name: "printf",
    effect: Some(effect),
    ..Lowering::NONE
};

pub(crate) const CAT: Lowering = Lowering {
    name: "cat",
    effect: Some(effect),
    ..Lowering::NONE
};

pub(crate) const SYSTEM: Lowering = Lowering {
    name: "system",
    effect: Some(effect),
    ..Lowering::NONE
};

pub(crate) const ERRORF: Lowering = Lowering {
    name: "errorf",
    effect: Some(effect),
    ..Lowering::NONE
};

pub(crate) const WARNF: Lowering = Lowering {
    name: "warnf",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    emit_formatted(l, call.site(), &call.args[1..]);
}

/// The record of printf site `site` (a `printf`, `cat`, `system` or a
/// `print(value)`) with `args` at the offsets of its layout.
pub(super) fn emit_formatted(l: &mut Lower<'_>, site: usize, args: &[syntax::ast::Expr]) {
    let spec = l.printfs[site].clone();
    let types = l.typed.printfs[site].args.clone();
    // Scalars first, so no helper call runs while the record is reserved
    // except those that write straight into it (strings).
    let mut scalars = Vec::new();
    for (arg, t) in args.iter().zip(&types) {
        scalars.push(if t.is_scalar() {
            Some(l.scalar(arg))
        } else {
            None
        });
    }
    l.emit_event(
        EventKind::Printf,
        site as u32,
        |l, rec| {
            // User space reads each string up to its NUL: no padding needed.
            l.canonical = false;
            for (((arg, t), field), scalar) in
                args.iter().zip(&types).zip(&spec.args).zip(scalars)
            {
                let place = Place::Ptr(rec, field.field.offset as i32);
                match scalar {
                    Some(v) => l.store(place, Src::Reg(v), scalar_width(t)),
                    None => l.write_into(arg, place, t),
                }
            }
            l.canonical = true;
        },
        spec.size,
    );
}
