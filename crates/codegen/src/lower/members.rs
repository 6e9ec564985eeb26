//! Struct members through BTF (`sema::check::members`), and `*ptr`, read the
//! same way as a member at offset 0: `ptr->member` is
//! the pointer plus the member's offset, `value.member` adds the offset to
//! the address of the embedded struct, and a scalar member is read with one
//! `bpf_probe_read` of its width (0 when the address is unreadable), then
//! normalised to 64 bits by its sign; a bitfield reads the bytes that hold
//! it, then two shifts keep its bits. `char` arrays are read with
//! `bpf_probe_read_str`. These helpers read kernel and user addresses alike
//! (x86-64 keeps them apart), as bpftrace 0.17 does: a syscall's pointer
//! argument (`args->rqtp->tv_nsec`) is user memory, `curtask` kernel memory.

use sema::MemberValue;
use syntax::ast::{Expr, ExprKind, UnaryOp};

use super::{Lower, Place};
use crate::asm::{AluOp, Cond, Helper, Src, VReg, Width};

impl Lower<'_> {
    /// The address of the member a `Field` node designates (or, for `*ptr`,
    /// the pointer itself).
    fn member_addr(&mut self, e: &Expr) -> VReg {
        if let ExprKind::Index { expr: base, index } = &e.kind {
            return self.element_addr(e, base, index);
        }
        let (ExprKind::Field { expr: base, .. }
        | ExprKind::Unary {
            op: UnaryOp::Deref,
            expr: base,
        }) = &e.kind
        else {
            return self.constant(0);
        };
        let Some(access) = self.probe.members.get(&e.id).cloned() else {
            return self.constant(0);
        };
        let addr = if access.arrow {
            self.scalar(base)
        } else {
            self.value_addr(base)
        };
        self.set_span(e.span);
        if access.offset != 0 {
            self.asm
                .alu(AluOp::Add, addr, Src::Imm(access.offset as i32));
        }
        addr
    }

    /// The address of `base[index]`: `base` is a pointer, and the index
    /// counts what it points to.
    fn element_addr(&mut self, e: &Expr, base: &Expr, index: &Expr) -> VReg {
        let addr = if matches!(self.ty(base), sema::Type::Array { .. }) {
            self.value_addr(base)
        } else {
            self.scalar(base)
        };
        let scale = self.probe.scales.get(&e.id).copied().unwrap_or(1);
        match index.kind {
            ExprKind::Int { value, .. } => {
                let offset = (value as i64).saturating_mul(i64::from(scale));
                self.set_span(e.span);
                match i32::try_from(offset) {
                    Ok(off) => self.asm.alu(AluOp::Add, addr, Src::Imm(off)),
                    Err(_) => {
                        let k = self.constant(offset);
                        self.asm.alu(AluOp::Add, addr, Src::Reg(k));
                    }
                }
            }
            _ => {
                let i = self.scalar(index);
                self.set_span(e.span);
                // Past the end: bpftrace's warning, then the read all the same.
                if let (Some(&site), sema::Type::Array { len, .. }) =
                    (self.probe.runtime_warnings.get(&e.id), self.ty(base))
                {
                    let inside = self.asm.label();
                    self.asm.br(
                        Cond::Lt,
                        i,
                        Src::Imm(len.min(i32::MAX as u32) as i32),
                        inside,
                    );
                    let size = self.printfs[site].size;
                    self.emit_event(abi::EventKind::Printf, site as u32, |_, _| {}, size);
                    self.asm.bind(inside);
                }
                if scale != 1 {
                    self.asm.alu(AluOp::Mul, i, Src::Imm(scale as i32));
                }
                self.asm.alu(AluOp::Add, addr, Src::Reg(i));
            }
        }
        addr
    }

    /// The address of an array or struct: where it is in kernel memory when
    /// it is a member or `*p` (only what is used is then read), else where
    /// its value is held (a variable's slot, a map value, a temporary it is
    /// copied into).
    fn value_addr(&mut self, e: &Expr) -> VReg {
        if self.probe.members.contains_key(&e.id) {
            return self.member_addr(e);
        }
        let (place, _) = self.mem(e);
        self.addr(place)
    }

    /// `&x`: a variable's address (its stack slot or its place in a stream
    /// instance), or a member's.
    pub(crate) fn address_of(&mut self, inner: &Expr) -> VReg {
        match &inner.kind {
            ExprKind::Var(name) => match self.var_place(inner.id, name) {
                Some(place) => self.addr(place),
                None => self.constant(0),
            },
            _ if self.probe.members.contains_key(&inner.id) => self.member_addr(inner),
            _ => self.constant(0),
        }
    }

    /// An integer or pointer member, read from kernel memory.
    pub(crate) fn member_scalar(&mut self, e: &Expr) -> VReg {
        let (size, signed, bits) = match self.probe.members.get(&e.id).map(|a| a.value) {
            Some(MemberValue::Int { size, signed }) => (size, signed, None),
            Some(MemberValue::Pointer) => (8, false, None),
            Some(MemberValue::Bits { size, shift, width }) => (size, false, Some((shift, width))),
            _ => return self.constant(0),
        };
        let addr = self.member_addr(e);
        let w = match size {
            1 => Width::B,
            2 => Width::H,
            4 => Width::W,
            _ => Width::DW,
        };
        let slot = self.asm.stack(8);
        self.asm.store_stack(slot, 0, Src::Imm(0), Width::DW);
        let dst = self.asm.vreg();
        self.asm.stack_addr(dst, slot, 0);
        self.checked_call(
            Helper::PROBE_READ,
            &[Src::Reg(dst), Src::Imm(size as i32), Src::Reg(addr)],
            true,
        );
        let r = self.asm.vreg();
        self.asm.load_stack(r, slot, 0, w);
        match bits {
            // Up to the field's last bit, then down to its first: the bits
            // above it and below it fall off, the value is zero-extended.
            Some((shift, width)) => {
                let high = 64 - i32::from(shift) - i32::from(width);
                if high > 0 {
                    self.asm.alu(AluOp::Lsh, r, Src::Imm(high));
                }
                if width < 64 {
                    self.asm.alu(AluOp::Rsh, r, Src::Imm(64 - i32::from(width)));
                }
            }
            None => self.normalise(r, size, signed),
        }
        r
    }

    /// An array member copied as it is, `len` bytes (zero when unreadable).
    pub(crate) fn member_array(&mut self, e: &Expr, place: Place, len: u32) {
        let Some(MemberValue::Array { size }) = self.probe.members.get(&e.id).map(|a| a.value)
        else {
            self.zero(place, len);
            return;
        };
        self.member_bytes(e, place, size.min(len));
    }

    /// A byte array member copied as it is (an address for `ntop()`), `len` bytes.
    pub(crate) fn member_bytes(&mut self, e: &Expr, place: Place, len: u32) {
        let src = self.member_addr(e);
        let dst = self.addr(place);
        self.checked_call(
            Helper::PROBE_READ,
            &[Src::Reg(dst), Src::Imm(len as i32), Src::Reg(src)],
            true,
        );
    }

    /// A `char` array member, as a string of at most `size` bytes.
    pub(crate) fn member_string(&mut self, e: &Expr, place: Place, size: u32) {
        let Some(MemberValue::Chars { len }) = self.probe.members.get(&e.id).map(|a| a.value)
        else {
            self.write_literal(b"", place, size);
            return;
        };
        let src = self.member_addr(e);
        // The helper stops at the NUL and leaves the rest as it was. A
        // `char[N]` of a script's struct is a string of N + 1 bytes: all N
        // characters and a NUL (the read may look at the byte after the
        // array, and puts the NUL over it).
        self.zero_range(place, 0, size);
        let dst = self.addr(place);
        self.checked_call(
            Helper::PROBE_READ_STR,
            &[
                Src::Reg(dst),
                Src::Imm((len + 1).min(size) as i32),
                Src::Reg(src),
            ],
            true,
        );
    }
}
