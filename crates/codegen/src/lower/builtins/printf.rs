//! `printf(fmt, args...)`, `cat`, `system`, `errorf` and `warnf` (rules in
//! `sema::builtins::printf`): one ring-buffer record with the arguments at
//! the offsets of the printf's layout (`abi::PrintfSpec`); user space
//! renders the format the manifest carries.
//!
//! A record with a long string (over `abi::PACKED_STRING_MIN` bytes: `str()`
//! at the default `max_strlen` of 1024) costs what the string holds, not
//! its buffer: the record is built in the program's scratch buffer, each
//! long string after the fixed part at its length (`abi::PrintfArg::tail`),
//! and sent by `bpf_ringbuf_output` at the size used. `bpf_probe_read_str`
//! gives the length it wrote, so no byte is counted by a loop. A ring-buffer
//! reservation has a constant size, so reserving the largest record would
//! spend 1 KiB of the buffer per string (a 1 MiB buffer fills at a
//! thousand events) where a path takes a few dozen bytes.

use abi::{EventKind, PrintfSpec};
use sema::Type;
use syntax::ast::Expr;

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Cond, Helper, Src, VReg, Width};
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

/// The largest printf record built in the scratch buffer (a quarter of it).
const SCRATCH_RECORD_MAX: u32 = 8 * 1024;

fn effect(l: &mut Lower<'_>, call: &CallSite<'_>) {
    emit_formatted(l, call.site(), &call.args[1..]);
}

/// The record of printf site `site` (a `printf`, `cat`, `system` or a
/// `print(value)`) with `args` at the offsets of its layout.
pub(super) fn emit_formatted(l: &mut Lower<'_>, site: usize, args: &[syntax::ast::Expr]) {
    let spec = l.printfs[site].clone();
    let types = l.typed.printfs[site].args.clone();
    // A record larger than `SCRATCH_RECORD_MAX` (`max_strlen` raised far)
    // would crowd out the values it is made of in the scratch buffer: it is
    // reserved at its largest, the tail strings packed in it all the same
    // (user space reads one layout).
    let packed = spec.args.iter().any(|a| a.tail);
    if packed && spec.size <= SCRATCH_RECORD_MAX {
        return emit_packed(l, site, &spec, args, &types);
    }
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
            let mut used = None;
            if packed {
                used = Some(l.constant(i64::from(spec.fixed_size)));
            }
            for (((arg, t), field), scalar) in
                args.iter().zip(&types).zip(&spec.args).zip(scalars)
            {
                let place = Place::Ptr(rec, field.field.offset as i32);
                match (scalar, used) {
                    (Some(v), _) => l.store(place, Src::Reg(v), scalar_width(t)),
                    (None, Some(used)) if field.tail => write_tail(l, arg, t, rec, place, used),
                    (None, _) => l.write_into(arg, place, t),
                }
            }
            l.canonical = true;
        },
        spec.size,
    );
}

/// [`emit_formatted`] for a record with tail strings: built in the scratch
/// buffer, sent at its length.
fn emit_packed(l: &mut Lower<'_>, site: usize, spec: &PrintfSpec, args: &[Expr], types: &[Type]) {
    let at = l.asm.scratch(spec.size);
    let rec = l.addr(Place::Ptr(l.scratch_base, at as i32));
    l.asm
        .store(rec, 0, Src::Imm(EventKind::Printf as i32), Width::W);
    l.asm.store(rec, 4, Src::Imm(site as i32), Width::W);
    // The record's length so far: each tail string adds its own. The
    // verifier follows its bounds, so every write stays within `spec.size`.
    let used = l.constant(i64::from(spec.fixed_size));
    l.canonical = false;
    for ((arg, t), field) in args.iter().zip(types).zip(&spec.args) {
        let slot = Place::Ptr(rec, field.field.offset as i32);
        if !field.tail {
            if t.is_scalar() {
                let v = l.scalar(arg);
                l.store(slot, Src::Reg(v), scalar_width(t));
            } else {
                l.write_into(arg, slot, t);
            }
            continue;
        }
        write_tail(l, arg, t, rec, slot, used);
    }
    l.canonical = true;
    let map = l.asm.vreg();
    l.asm.map_ptr(map, abi::EVENTS_MAP);
    let ret = l.asm.vreg();
    l.asm.call(
        Helper::RINGBUF_OUTPUT,
        &[Src::Reg(map), Src::Reg(rec), Src::Reg(used), Src::Imm(0)],
        Some(ret),
    );
    let sent = l.asm.label();
    l.asm.br(Cond::SGe, ret, Src::Imm(0), sent);
    l.count_loss(abi::CounterIndex::RingbufFull);
    l.asm.bind(sent);
}

/// Writes the tail string `arg` at `rec + used`, its length at `slot`, and
/// adds the length to `used`.
fn write_tail(l: &mut Lower<'_>, arg: &Expr, t: &Type, rec: VReg, slot: Place, used: VReg) {
    let Type::Str { size } = *t else { return };
    let dst = l.asm.vreg();
    l.asm.mov(dst, Src::Reg(rec));
    l.asm.alu(AluOp::Add, dst, Src::Reg(used));
    let len = write_counted(l, arg, dst, size);
    // A failed read wrote nothing: an empty string.
    let (nonnegative, bounded) = (l.asm.label(), l.asm.label());
    l.asm.br(Cond::SGe, len, Src::Imm(0), nonnegative);
    l.asm.mov(len, Src::Imm(0));
    l.asm.bind(nonnegative);
    l.asm.br(Cond::Le, len, Src::Imm(size as i32), bounded);
    l.asm.mov(len, Src::Imm(size as i32));
    l.asm.bind(bounded);
    l.store(slot, Src::Reg(len), Width::W);
    l.asm.alu(AluOp::Add, used, Src::Reg(len));
}

/// Writes the string `arg` into a buffer of `size` bytes at `dst` (up to
/// its NUL) and gives the bytes written, NUL included, or `size` for a
/// string that fills the buffer without one (cut, printed with the
/// trailer); negative when a read failed.
fn write_counted(l: &mut Lower<'_>, arg: &Expr, dst: VReg, size: u32) -> VReg {
    let place = Place::Ptr(dst, 0);
    // `str(p)` reads straight into the record; the helper counts.
    if let Some((lowering, call)) = l.builtin_call(arg)
        && lowering.name == "str"
        && call.args.first().is_some_and(|p| !l.ty(p).is_str())
    {
        return super::str::read(l, &call, place, size);
    }
    // A literal's length is known.
    if let syntax::ast::ExprKind::Str(bytes) = &arg.kind {
        l.write_literal(bytes, place, size);
        let n = (bytes.len() as u32).min(size.saturating_sub(1)) + 1;
        return l.constant(i64::from(n));
    }
    // Any other string is made where it is made, then copied up to its NUL
    // by `bpf_probe_read_kernel_str`, which counts.
    let (src, held) = l.mem(arg);
    let n = held.min(size).max(1);
    let from = l.addr(src);
    let len = l.asm.vreg();
    l.asm.call(
        Helper::PROBE_READ_KERNEL_STR,
        &[Src::Reg(dst), Src::Imm(n as i32), Src::Reg(from)],
        Some(len),
    );
    if held <= size {
        // The copy ends with a NUL: where the string filled its buffer
        // (no NUL of its own), its last byte goes there, as it was.
        let done = l.asm.label();
        l.asm.br(Cond::Ne, len, Src::Imm(n as i32), done);
        let last = l.asm.vreg();
        l.load(last, src.offset(n - 1), Width::B);
        l.store(place.offset(n - 1), Src::Reg(last), Width::B);
        l.asm.bind(done);
    }
    len
}
