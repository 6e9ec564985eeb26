//! Expressions: scalars into registers, strings and tuples into memory.

use ktypes::FieldKind;
use sema::Type;
use syntax::ast::{BinaryOp, Expr, ExprKind, IncDecOp, NodeId, UnaryOp};

use super::{Lower, Place, scalar_width};
use crate::asm::{AluOp, Cond, Helper, Src, VReg, Width};

impl Lower<'_> {
    /// Evaluates a scalar expression (integer or pointer) into a register,
    /// normalised to 64 bits.
    pub(crate) fn scalar(&mut self, e: &Expr) -> VReg {
        self.set_span(e.span);

        match &e.kind {
            ExprKind::Int { value, .. } => self.constant(*value as i64),
            ExprKind::Bool(b) => self.constant(*b as i64),
            ExprKind::Positional(n) => {
                let v = self
                    .typed
                    .positional
                    .get(*n as usize - 1)
                    .and_then(|v| syntax::positional_int(v))
                    .unwrap_or(0);
                self.constant(v as i64)
            }
            ExprKind::PositionalCount => self.constant(self.typed.positional.len() as i64),
            // Found when checking.
            ExprKind::Sizeof(_) | ExprKind::Offsetof { .. } => {
                self.constant(self.probe.constants.get(&e.id).copied().unwrap_or(0))
            }
            ExprKind::Ident(_) => match self.builtin_variable_scalar(e) {
                Some(r) => r,
                None => self.constant(self.probe.constants.get(&e.id).copied().unwrap_or(0)),
            },
            ExprKind::Var(name) => {
                let r = self.asm.vreg();
                if let Some(place) = self.var_place(e.id, name) {
                    let w = scalar_width(&self.ty(e));
                    self.load(r, place, w);
                } else {
                    self.asm.mov(r, Src::Imm(0));
                }
                r
            }
            ExprKind::Map { keys, .. } => self.map_read_scalar(e, keys),
            ExprKind::Unary {
                op: UnaryOp::Deref, ..
            } => self.member_scalar(e),
            ExprKind::Unary {
                op: UnaryOp::AddrOf,
                expr,
            } => self.address_of(expr),
            ExprKind::Unary { op, expr } => {
                let v = self.scalar(expr);
                self.set_span(e.span);
                match op {
                    UnaryOp::Not => self.compare(Cond::Eq, v, Src::Imm(0)),
                    UnaryOp::BitNot => {
                        self.asm.alu(AluOp::Xor, v, Src::Imm(-1));
                        v
                    }
                    UnaryOp::Neg => {
                        self.asm.neg(v);
                        v
                    }
                    UnaryOp::Deref | UnaryOp::AddrOf => v,
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(e, *op, lhs, rhs),
            ExprKind::Ternary { cond, then, else_ } => {
                let c = self.scalar(cond);
                let out = self.asm.vreg();
                let (other, done) = (self.asm.label(), self.asm.label());
                self.asm.br(Cond::Eq, c, Src::Imm(0), other);
                let t = match then {
                    Some(t) => self.scalar(t),
                    None => c,
                };
                self.asm.mov(out, Src::Reg(t));
                self.asm.jmp(done);
                self.asm.bind(other);
                let f = self.scalar(else_);
                self.asm.mov(out, Src::Reg(f));
                self.asm.bind(done);
                out
            }
            ExprKind::IncDec { op, prefix, target } => self.inc_dec(*op, *prefix, target),
            ExprKind::Field { .. } | ExprKind::Index { .. }
                if self.probe.record_fields.contains_key(&e.id) =>
            {
                self.tuple_field_scalar(e)
            }
            ExprKind::Block(b) => {
                self.statements(b);
                match &b.tail {
                    Some(t) => self.scalar(t),
                    None => self.constant(0),
                }
            }
            ExprKind::If { cond, then, else_ } => {
                let out = self.asm.vreg();
                let (other, done) = (self.asm.label(), self.asm.label());
                self.branch_on(cond, false, other);
                self.statements(then);
                let t = match &then.tail {
                    Some(t) => self.scalar(t),
                    None => self.constant(0),
                };
                self.asm.mov(out, Src::Reg(t));
                self.asm.jmp(done);
                self.asm.bind(other);
                let f = match else_ {
                    Some(e) => self.scalar(e),
                    None => self.constant(0),
                };
                self.asm.mov(out, Src::Reg(f));
                self.asm.bind(done);
                out
            }
            ExprKind::Field { .. } => match self.probe.stream_args.get(&e.id).cloned() {
                Some(arg) => self.stream_arg_scalar(&arg),
                None if self.probe.members.contains_key(&e.id) => self.member_scalar(e),
                None => self.field_scalar(e, 0),
            },
            ExprKind::Index { .. } if self.probe.members.contains_key(&e.id) => {
                self.member_scalar(e)
            }
            ExprKind::Index { expr, index } if self.ty(expr).is_str() => {
                self.string_byte(expr, index)
            }
            ExprKind::Index { expr, index } => {
                let ExprKind::Int { value, .. } = index.kind else {
                    return self.constant(0);
                };
                let elem = match self.ty(e) {
                    Type::Int { size, .. } => size as u32,
                    _ => 8,
                };
                self.field_scalar(expr, value as u32 * elem)
            }
            ExprKind::TupleIndex { .. } => self.tuple_field_scalar(e),
            ExprKind::Cast { expr, .. } if matches!(self.ty(expr), Type::Array { .. }) => {
                // The array's bytes as an integer of its size.
                let (place, _) = self.mem(expr);
                let (size, signed) = match self.ty(e) {
                    Type::Int { size, signed } => (size, signed),
                    _ => (8, false),
                };
                let r = self.asm.vreg();
                self.load(r, place, width_of(size));
                self.normalise(r, size, signed);
                r
            }
            ExprKind::Cast { expr, .. } => {
                let v = self.scalar(expr);
                match self.ty(e) {
                    Type::Int { size, signed } => self.normalise(v, size, signed),
                    // Any value but zero is `true`.
                    Type::Bool => return self.compare(Cond::Ne, v, Src::Imm(0)),
                    _ => {}
                }
                v
            }
            // Calls without an integer value are kept out of here by the checker.
            ExprKind::Call { .. } => match self.builtin_scalar_call(e) {
                Some(r) => r,
                None => match self.builtin_variable_scalar(e) {
                    Some(r) => r,
                    None => self.constant(0),
                },
            },
            _ => self.constant(0),
        }
    }

    pub(crate) fn constant(&mut self, v: i64) -> VReg {
        let r = self.asm.vreg();
        self.asm.imm64(r, v);
        r
    }

    /// Truncates `v` to `size` bytes and extends it back to 64 bits by sign.
    pub(crate) fn normalise(&mut self, v: VReg, size: u8, signed: bool) {
        if size >= 8 {
            return;
        }
        let shift = 64 - 8 * size as i32;
        self.asm.alu(AluOp::Lsh, v, Src::Imm(shift));
        self.asm.alu(
            if signed { AluOp::Arsh } else { AluOp::Rsh },
            v,
            Src::Imm(shift),
        );
    }

    /// `a cond b` as 0 or 1.
    pub(crate) fn compare(&mut self, cond: Cond, a: VReg, b: Src) -> VReg {
        let out = self.asm.vreg();
        let done = self.asm.label();
        self.asm.mov(out, Src::Imm(1));
        self.asm.br(cond, a, b, done);
        self.asm.mov(out, Src::Imm(0));
        self.asm.bind(done);
        out
    }

    /// Jumps to `target` when `e`'s truth is `when`, else falls through:
    /// comparisons, `!`, `&&` and `||` become branches instead of 0/1 values.
    pub(crate) fn branch_on(&mut self, e: &Expr, when: bool, target: crate::asm::Label) {
        use BinaryOp::*;
        match &e.kind {
            ExprKind::Unary {
                op: UnaryOp::Not,
                expr,
            } => return self.branch_on(expr, !when, target),
            ExprKind::Binary {
                op: op @ (LogAnd | LogOr),
                lhs,
                rhs,
            } => {
                // `a && b` is false when either is; `a || b` true when either is.
                if (*op == LogAnd) != when {
                    self.branch_on(lhs, when, target);
                    self.branch_on(rhs, when, target);
                } else {
                    let skip = self.asm.label();
                    self.branch_on(lhs, !when, skip);
                    self.branch_on(rhs, when, target);
                    self.asm.bind(skip);
                }
                return;
            }
            ExprKind::Binary {
                op: op @ (Eq | Ne | Lt | Le | Gt | Ge),
                lhs,
                rhs,
            } if self.ty(lhs).is_scalar() && self.ty(rhs).is_scalar() => {
                let signed = self.ty(lhs).is_signed() || self.ty(rhs).is_signed();
                let l = self.scalar(lhs);
                // A literal that fits the sign-extended immediate is the same 64-bit value.
                let r = match rhs.kind {
                    ExprKind::Int { value, .. } if i32::try_from(value as i64).is_ok() => {
                        Src::Imm(value as i64 as i32)
                    }
                    _ => Src::Reg(self.scalar(rhs)),
                };
                self.set_span(e.span);
                // Branch when false: on the opposite comparison.
                let op = match (when, op) {
                    (true, op) => *op,
                    (false, Eq) => Ne,
                    (false, Ne) => Eq,
                    (false, Lt) => Ge,
                    (false, Le) => Gt,
                    (false, Gt) => Le,
                    (false, _) => Lt,
                };
                let pick = |u: Cond, s: Cond| if signed { s } else { u };
                let cond = match op {
                    Eq => Cond::Eq,
                    Ne => Cond::Ne,
                    Lt => pick(Cond::Lt, Cond::SLt),
                    Le => pick(Cond::Le, Cond::SLe),
                    Gt => pick(Cond::Gt, Cond::SGt),
                    _ => pick(Cond::Ge, Cond::SGe),
                };
                self.asm.br(cond, l, r, target);
                return;
            }
            _ => {}
        }
        let c = self.scalar(e);
        self.set_span(e.span);
        let cond = if when { Cond::Ne } else { Cond::Eq };
        self.asm.br(cond, c, Src::Imm(0), target);
    }

    fn binary(&mut self, e: &Expr, op: BinaryOp, lhs: &Expr, rhs: &Expr) -> VReg {
        use BinaryOp::*;
        if matches!(op, LogAnd | LogOr) {
            // Short-circuit: the right side runs only when needed.
            let out = self.asm.vreg();
            let done = self.asm.label();
            let l = self.scalar(lhs);
            self.set_span(e.span);
            let short = if op == LogAnd { 0 } else { 1 };
            self.asm.mov(out, Src::Imm(short));
            self.asm.br(
                if op == LogAnd { Cond::Eq } else { Cond::Ne },
                l,
                Src::Imm(0),
                done,
            );
            let r = self.scalar(rhs);
            self.set_span(e.span);
            let rb = self.compare(Cond::Ne, r, Src::Imm(0));
            self.asm.mov(out, Src::Reg(rb));
            self.asm.bind(done);
            return out;
        }
        let (lt, rt) = (self.ty(lhs), self.ty(rhs));
        if lt.is_str() && rt.is_str() {
            let eq = self.string_equal(lhs, rhs);
            self.set_span(e.span);
            if op == Ne {
                self.asm.alu(AluOp::Xor, eq, Src::Imm(1));
            }
            return eq;
        }
        if matches!(lt, Type::Array { .. } | Type::Buf { .. }) {
            let eq = self.bytes_equal(lhs, rhs);
            self.set_span(e.span);
            if op == Ne {
                self.asm.alu(AluOp::Xor, eq, Src::Imm(1));
            }
            return eq;
        }
        let signed = lt.is_signed() || rt.is_signed();
        let l = self.scalar(lhs);
        let r = self.scalar(rhs);
        self.set_span(e.span);
        if let Some(&scale) = self.probe.scales.get(&e.id) {
            // Pointer arithmetic: the integer side counts pointees.
            let count = if matches!(lt, Type::Pointer { .. }) {
                r
            } else {
                l
            };
            if scale != 1 {
                self.asm.alu(AluOp::Mul, count, Src::Imm(scale as i32));
            }
        }
        let cond = |c_unsigned: Cond, c_signed: Cond| if signed { c_signed } else { c_unsigned };
        match op {
            Eq => self.compare(Cond::Eq, l, Src::Reg(r)),
            Ne => self.compare(Cond::Ne, l, Src::Reg(r)),
            Lt => self.compare(cond(Cond::Lt, Cond::SLt), l, Src::Reg(r)),
            Le => self.compare(cond(Cond::Le, Cond::SLe), l, Src::Reg(r)),
            Gt => self.compare(cond(Cond::Gt, Cond::SGt), l, Src::Reg(r)),
            Ge => self.compare(cond(Cond::Ge, Cond::SGe), l, Src::Reg(r)),
            _ => {
                let alu = match op {
                    BitOr => AluOp::Or,
                    BitXor => AluOp::Xor,
                    BitAnd => AluOp::And,
                    Shl => AluOp::Lsh,
                    Shr => {
                        if lt.is_signed() {
                            AluOp::Arsh
                        } else {
                            AluOp::Rsh
                        }
                    }
                    Add => AluOp::Add,
                    Sub => AluOp::Sub,
                    Mul => AluOp::Mul,
                    Div => {
                        if signed {
                            AluOp::SDiv
                        } else {
                            AluOp::Div
                        }
                    }
                    Mod => {
                        if signed {
                            AluOp::SMod
                        } else {
                            AluOp::Mod
                        }
                    }
                    _ => AluOp::Add,
                };
                if matches!(op, Div | Mod) {
                    self.divide(alu, l, r, e.id);
                } else {
                    self.asm.alu(alu, l, Src::Reg(r));
                }
                l
            }
        }
    }

    /// `l = l / r` or `l = l % r` (`alu`) for the division at `node`. When
    /// the divisor may be zero (`sema::check::runtime_checks`), a zero divisor
    /// gives 1 and sends the division's warning, as bpftrace does.
    pub(crate) fn divide(&mut self, alu: AluOp, l: VReg, r: VReg, node: NodeId) {
        let Some(&site) = self.probe.runtime_warnings.get(&node) else {
            self.asm.alu(alu, l, Src::Reg(r));
            return;
        };
        let (nonzero, done) = (self.asm.label(), self.asm.label());
        self.asm.br(Cond::Ne, r, Src::Imm(0), nonzero);
        self.asm.mov(l, Src::Imm(1));
        let size = self.printfs[site].size;
        self.emit_event(abi::EventKind::Printf, site as u32, |_, _| {}, size);
        self.asm.jmp(done);
        self.asm.bind(nonzero);
        self.asm.alu(alu, l, Src::Reg(r));
        self.asm.bind(done);
    }

    /// `s[i]`: the string's byte at `i` as a `char`, or 0 past its buffer
    /// (a run-time index is checked against it, which the verifier needs).
    fn string_byte(&mut self, string: &Expr, index: &Expr) -> VReg {
        let (place, size) = self.mem(string);
        let r = self.asm.vreg();
        match index.kind {
            ExprKind::Int { value, .. } if value < u64::from(size) => {
                self.load(r, place.offset(value as u32), Width::B)
            }
            ExprKind::Int { .. } => self.asm.mov(r, Src::Imm(0)),
            _ => {
                let i = self.scalar(index);
                let done = self.asm.label();
                self.asm.mov(r, Src::Imm(0));
                self.asm.br(Cond::Ge, i, Src::Imm(size as i32), done);
                let at = self.addr(place);
                self.asm.alu(AluOp::Add, at, Src::Reg(i));
                self.asm.load(r, at, 0, Width::B);
                self.asm.bind(done);
            }
        }
        self.normalise(r, 1, true);
        r
    }

    /// `args->field` (plus `extra` bytes, for `args->array[i]`) loaded from the tracepoint record.
    /// `t.N` or `r.name`: an integer field of a tuple or record, loaded
    /// from where the value is held.
    fn tuple_field_scalar(&mut self, e: &Expr) -> VReg {
        let Some((base, index)) = self.field_of(e) else {
            return self.constant(0);
        };
        let held = self.held_type(base);
        let Some(&offset) = field_offsets(&held.layout()).get(index) else {
            return self.constant(0);
        };
        let elem = elems(&held).get(index).cloned();
        let (place, _) = self.mem(base);
        let r = self.asm.vreg();
        self.load_scalar(r, place.offset(offset), elem.as_ref());
        r
    }

    /// For `t.N` and `r.name`: the tuple or record, and the field's position.
    fn field_of<'e>(&self, e: &'e Expr) -> Option<(&'e Expr, usize)> {
        match &e.kind {
            ExprKind::TupleIndex { expr, index } => Some((expr, *index as usize)),
            // `.name` of a record, `[N]` of a tuple.
            ExprKind::Field { expr, .. } | ExprKind::Index { expr, .. } => {
                let i = *self.probe.record_fields.get(&e.id)?;
                Some((expr, i as usize))
            }
            _ => None,
        }
    }

    fn field_scalar(&mut self, field_expr: &Expr, extra: u32) -> VReg {
        let r = self.asm.vreg();
        let Some(access) = self.probe.fields.get(&field_expr.id) else {
            self.asm.mov(r, Src::Imm(0));
            return r;
        };
        let f = access.field.clone();
        let elem = match f.kind {
            FieldKind::Array { len } => f.size / len.max(1),
            _ => f.size,
        };
        let (w, size) = match elem {
            1 => (Width::B, 1u8),
            2 => (Width::H, 2),
            4 => (Width::W, 4),
            _ => (Width::DW, 8),
        };
        let ctx = self.ctx();
        self.asm.load(r, ctx, (f.offset + extra) as i16, w);
        self.normalise(r, size, f.signed);
        r
    }

    /// Puts a value of any type into memory at `place`, stored as `dst`.
    pub(crate) fn write_into(&mut self, e: &Expr, place: Place, dst: &Type) {
        self.set_span(e.span);
        if self.builtin_write(e, place, dst) {
            return;
        }
        // A tuple, address or stack chosen by a condition: each side is
        // written into the place (scalars and strings choose on their own).
        if let ExprKind::Ternary { cond, then, else_ } = &e.kind
            && !dst.is_scalar()
            && !dst.is_str()
        {
            let c = self.scalar(cond);
            let (other, done) = (self.asm.label(), self.asm.label());
            self.asm.br(Cond::Eq, c, Src::Imm(0), other);
            // `a ?: b` gives `a` itself, which only a scalar can be.
            if let Some(then) = then {
                self.write_into(then, place, dst);
            }
            self.asm.jmp(done);
            self.asm.bind(other);
            self.write_into(else_, place, dst);
            self.asm.bind(done);
            return;
        }
        // A value chosen by a block or `if`: each way writes it.
        if !dst.is_scalar() {
            match &e.kind {
                ExprKind::Block(b) => {
                    self.statements(b);
                    if let Some(t) = &b.tail {
                        self.write_into(t, place, dst);
                    }
                    return;
                }
                ExprKind::If { cond, then, else_ } => {
                    let (other, done) = (self.asm.label(), self.asm.label());
                    self.branch_on(cond, false, other);
                    self.statements(then);
                    if let Some(t) = &then.tail {
                        self.write_into(t, place, dst);
                    }
                    self.asm.jmp(done);
                    self.asm.bind(other);
                    if let Some(e) = else_ {
                        self.write_into(e, place, dst);
                    }
                    self.asm.bind(done);
                    return;
                }
                _ => {}
            }
        }
        match dst {
            Type::Int { size, signed } => {
                let v = self.scalar(e);
                // A narrower declared variable (`let $x: uint8 = 300`) keeps what fits.
                if *size < 8 && self.ty(e) != *dst {
                    self.normalise(v, *size, *signed);
                }
                self.store(place, Src::Reg(v), Width::DW);
            }
            Type::Bool | Type::Pointer { .. } | Type::Enum { .. } => {
                let v = self.scalar(e);
                self.store(place, Src::Reg(v), scalar_width(dst));
            }
            Type::Str { size } => self.write_string(e, place, *size),
            Type::Tuple(_) | Type::Record(_) => {
                let layout = dst.layout();
                let items: Vec<&Expr> = match (&e.kind, dst) {
                    (ExprKind::Tuple(items), _) => items.iter().collect(),
                    (ExprKind::Record(fields), Type::Record(names)) => {
                        // Each field where the stored type has it, in the order written.
                        let layout = dst.layout();
                        let offsets = field_offsets(&layout);
                        for (name, x) in fields {
                            if let Some(i) = names.iter().position(|(n, _)| n == name) {
                                self.write_into(x, place.offset(offsets[i]), &names[i].1);
                            }
                        }
                        self.zero_padding(place, &layout);
                        return;
                    }
                    // `*p` of a pointer `&$t` made: the tuple's bytes.
                    _ if self.probe.members.contains_key(&e.id) => {
                        self.member_bytes(e, place, layout.size());
                        return;
                    }
                    _ if Self::held_in_memory(e)
                        || self.probe.record_fields.contains_key(&e.id) =>
                    {
                        let src_ty = self.held_type(e);
                        let (src, _) = self.mem(e);
                        self.convert_copy(place, dst, src, &src_ty);
                        return;
                    }
                    _ => {
                        self.zero_range(place, 0, layout.size());
                        return;
                    }
                };
                // Each field in the order written (a record's side effects too).
                for ((item, offset), t) in items.iter().zip(field_offsets(&layout)).zip(elems(dst))
                {
                    match t {
                        // A tuple packs an integer at its width.
                        Type::Int { size, signed } if size < 8 => {
                            let v = self.scalar(item);
                            if self.ty(item) != t {
                                self.normalise(v, size, signed);
                            }
                            self.store(place.offset(offset), Src::Reg(v), width_of(size));
                        }
                        Type::Enum { size, .. } if size < 8 => {
                            let v = self.scalar(item);
                            self.store(place.offset(offset), Src::Reg(v), width_of(size));
                        }
                        _ => self.write_into(item, place.offset(offset), &t),
                    }
                }
                self.zero_padding(place, &layout);
            }
            Type::Array { .. }
            | Type::Struct {
                layout: Some(_), ..
            } => {
                let size = dst.layout().size();
                match &e.kind {
                    _ if self.probe.members.contains_key(&e.id) => {
                        if matches!(dst, Type::Array { .. }) {
                            self.member_array(e, place, size)
                        } else {
                            self.member_bytes(e, place, size)
                        }
                    }
                    ExprKind::Var(_) | ExprKind::Map { .. } | ExprKind::TupleIndex { .. } => {
                        let (src, n) = self.mem(e);
                        self.copy(place, src, n.min(size));
                    }
                    ExprKind::Field { .. } | ExprKind::Index { .. }
                        if self.probe.record_fields.contains_key(&e.id) =>
                    {
                        let (src, n) = self.mem(e);
                        self.copy(place, src, n.min(size));
                    }
                    // `(int8[8])x`: the bytes of an integer, string or array.
                    ExprKind::Cast { expr, .. } => match self.ty(expr) {
                        Type::Int { .. } => {
                            let v = self.scalar(expr);
                            if place.base_offset() % i64::from(size) == 0 {
                                self.store(place, Src::Reg(v), width_of(size as u8));
                            } else {
                                // Inside a tuple an array may sit unaligned.
                                let tmp = self.temp(&Type::U64);
                                self.store(tmp, Src::Reg(v), Width::DW);
                                self.copy(place, tmp, size);
                            }
                        }
                        _ => {
                            let (src, n) = self.mem(expr);
                            self.copy(place, src, n.min(size));
                            self.zero_range(place, n.min(size), size);
                        }
                    },
                    _ => self.zero(place, size),
                }
            }
            // `*p` of a pointer `&$x` made: the value's bytes.
            Type::Inet
            | Type::Named(_)
            | Type::MacAddr
            | Type::Stack { .. }
            | Type::Sym { .. }
            | Type::Buf { .. }
            | Type::Timestamp { .. }
            | Type::CgroupPath
                if self.probe.members.contains_key(&e.id) =>
            {
                self.member_bytes(e, place, dst.layout().size());
            }
            // A value held elsewhere (a variable, a map value, a record field).
            Type::Inet
            | Type::Named(_)
            | Type::MacAddr
            | Type::Stack { .. }
            | Type::Sym { .. }
            | Type::Buf { .. }
            | Type::Timestamp { .. }
            | Type::CgroupPath
                if Self::held_in_memory(e) =>
            {
                let (src, n) = self.mem(e);
                self.copy(place, src, n.min(dst.layout().size()));
            }
            // A builtin that writes its value was handled above.
            Type::Inet
            | Type::Named(_)
            | Type::MacAddr
            | Type::Stack { .. }
            | Type::Sym { .. }
            | Type::Buf { .. }
            | Type::Timestamp { .. }
            | Type::CgroupPath => self.zero_range(place, 0, dst.layout().size()),
            Type::Agg(_)
            | Type::TracepointArgs
            | Type::StreamArgs(_)
            | Type::Void
            | Type::Struct { .. } => {}
        }
    }

    /// Writes a NUL-terminated string of at most `size` bytes (the NUL
    /// included), zero from its terminator to `size`: equal strings are
    /// then equal bytes wherever they are kept, as map keys need (the kernel
    /// hashes every byte of a key). Each source pads for itself, so the cost
    /// is a few stores per string, never a loop over its bytes.
    pub(crate) fn write_string(&mut self, e: &Expr, place: Place, size: u32) {
        match &e.kind {
            ExprKind::Str(bytes) => self.write_literal(bytes, place, size),
            ExprKind::Positional(n) => {
                let v = self
                    .typed
                    .positional
                    .get(*n as usize - 1)
                    .cloned()
                    .unwrap_or_default();
                self.write_literal(v.as_bytes(), place, size)
            }
            // `comm`, `probe`, `func`.
            ExprKind::Ident(_) => {
                if !self.builtin_write(e, place, &Type::Str { size }) {
                    self.write_literal(b"", place, size);
                }
            }
            ExprKind::Field { .. } | ExprKind::Index { .. }
                if self.probe.record_fields.contains_key(&e.id) =>
            {
                let (src, src_size) = self.mem(e);
                self.copy_string(place, size, src, src_size);
            }
            ExprKind::Field { .. } => match self.probe.stream_args.get(&e.id).cloned() {
                Some(arg) => {
                    if let Some(src) = self.stream_arg_place(&arg) {
                        let src_size = self.ty(e).layout().size();
                        self.copy_string(place, size, src, src_size);
                    }
                }
                None if self.probe.members.contains_key(&e.id) => {
                    self.member_string(e, place, size)
                }
                None => self.write_field_string(e, place, size),
            },
            ExprKind::Block(_) | ExprKind::If { .. } => {
                self.write_into(e, place, &Type::Str { size });
            }
            // `*p` of a pointer `&$s` made.
            ExprKind::Unary { .. } if self.probe.members.contains_key(&e.id) => {
                self.member_string(e, place, size)
            }
            ExprKind::Ternary { cond, then, else_ } => {
                let c = self.scalar(cond);
                let (other, done) = (self.asm.label(), self.asm.label());
                self.asm.br(Cond::Eq, c, Src::Imm(0), other);
                match then {
                    Some(t) => self.write_string(t, place, size),
                    None => self.write_literal(b"", place, size),
                }
                self.asm.jmp(done);
                self.asm.bind(other);
                self.write_string(else_, place, size);
                self.asm.bind(done);
            }
            ExprKind::Var(_) | ExprKind::Map { .. } | ExprKind::TupleIndex { .. } => {
                let (src, src_size) = self.mem(e);
                self.copy_string(place, size, src, src_size);
            }
            _ => self.write_literal(b"", place, size),
        }
    }

    /// Copies a string held in memory (itself zero past its terminator) into
    /// a buffer of `size` bytes: cut and terminated when its buffer is
    /// longer, zero after it when shorter; one of the same size is copied as
    /// it is (a string `str()` cut keeps its missing NUL, the trailer's sign).
    pub(crate) fn copy_string(&mut self, dst: Place, size: u32, src: Place, src_size: u32) {
        let n = src_size.min(size);
        self.copy(dst, src, n);
        if n < size {
            self.zero_range(dst, n, size);
        } else if n > 0 && src_size > size {
            self.store(dst.offset(size - 1), Src::Imm(0), Width::B);
        }
    }

    /// Copies a value held in memory as `src_ty` into `dst` as `dst_ty`,
    /// which may be wider (a tuple whose strings are shorter than the key's):
    /// field by field, each string padded, the padding zeroed.
    pub(crate) fn convert_copy(&mut self, dst: Place, dst_ty: &Type, src: Place, src_ty: &Type) {
        match (dst_ty, src_ty) {
            (Type::Str { size }, Type::Str { size: src_size }) => {
                self.copy_string(dst, *size, src, *src_size)
            }
            (Type::Record(d), Type::Record(s)) if dst_ty != src_ty => {
                let (dl, sl) = (dst_ty.layout(), src_ty.layout());
                let (doffs, soffs) = (field_offsets(&dl), field_offsets(&sl));
                for (i, (name, dt)) in d.iter().enumerate() {
                    if let Some(j) = s.iter().position(|(n, _)| n == name) {
                        self.convert_copy(dst.offset(doffs[i]), dt, src.offset(soffs[j]), &s[j].1);
                    }
                }
                self.zero_padding(dst, &dl);
            }
            (Type::Tuple(_), Type::Tuple(_)) if dst_ty != src_ty => {
                let (dl, sl) = (dst_ty.layout(), src_ty.layout());
                let parts = elems(dst_ty)
                    .into_iter()
                    .zip(elems(src_ty))
                    .zip(field_offsets(&dl).into_iter().zip(field_offsets(&sl)));
                for ((dt, st), (doff, soff)) in parts {
                    self.convert_copy(dst.offset(doff), &dt, src.offset(soff), &st);
                }
                self.zero_padding(dst, &dl);
            }
            // A packed integer into a wider (or narrower) one keeps its value.
            (d, s) if d != s && d.is_int() && s.is_int() => {
                let v = self.asm.vreg();
                self.load_scalar(v, src, Some(s));
                let w = match d {
                    Type::Int { size, .. } | Type::Enum { size, .. } => width_of(*size),
                    _ => Width::DW,
                };
                self.store(dst, Src::Reg(v), w);
            }
            _ => {
                let size = dst_ty.layout().size().min(src_ty.layout().size());
                self.copy(dst, src, size);
            }
        }
    }

    /// Loads a scalar of type `t` (a tuple's field) into `dst` as 64 bits:
    /// a packed integer narrower than 8 bytes is widened by its sign.
    pub(crate) fn load_scalar(&mut self, dst: VReg, place: Place, t: Option<&Type>) {
        match t {
            Some(Type::Int { size, signed }) if *size < 8 => {
                self.load(dst, place, width_of(*size));
                if *signed {
                    self.normalise(dst, *size, true);
                }
            }
            Some(Type::Enum { size, .. }) if *size < 8 => self.load(dst, place, width_of(*size)),
            t => self.load(dst, place, t.map_or(Width::DW, super::scalar_width)),
        }
    }

    /// Zeroes the bytes of a tuple that belong to no field (alignment gaps
    /// and the tail), so equal tuples are equal bytes.
    pub(crate) fn zero_padding(&mut self, place: Place, layout: &abi::Layout) {
        let size = layout.size();
        let sizes: Vec<u32> = match layout {
            abi::Layout::Tuple { fields, .. } => fields.iter().map(|f| f.layout.size()).collect(),
            abi::Layout::Record { fields, .. } => fields.iter().map(|f| f.layout.size()).collect(),
            _ => return,
        };
        let mut end = 0;
        for (offset, n) in field_offsets(layout).into_iter().zip(sizes) {
            self.zero_range(place, end, offset);
            end = offset + n;
        }
        self.zero_range(place, end, size);
    }

    /// Writes `bytes`, a NUL and zeros up to `size` bytes (the string cut to
    /// `size - 1` bytes if longer; no zeros in a printf record), in as few
    /// stores as alignment allows.
    pub(crate) fn write_literal(&mut self, bytes: &[u8], place: Place, size: u32) {
        let n = (bytes.len() as u32).min(size.saturating_sub(1)) as usize;
        let mut data = bytes[..n].to_vec();
        let end = if self.canonical { size as usize } else { 0 };
        data.resize(end.max(n + 1), 0);
        self.write_bytes(&data, place);
    }

    /// Writes exactly `data` at `place`, in as few stores as alignment allows.
    pub(crate) fn write_bytes(&mut self, data: &[u8], place: Place) {
        let mut off = 0;
        while off < data.len() {
            let rest = &data[off..];
            let (w, k) = super::chunk(place.offset(off as u32).base_offset(), rest.len() as u32);
            let k = k as usize;
            // Immediates are 32-bit: a double word only when it is all zero.
            let (w, k) = if w == Width::DW && rest[..8].iter().any(|&b| b != 0) {
                (Width::W, 4)
            } else {
                (w, k)
            };
            let mut v = 0u32;
            for (i, b) in rest[..k.min(4)].iter().enumerate() {
                v |= (*b as u32) << (8 * i);
            }
            self.store(place.offset(off as u32), Src::Imm(v as i32), w);
            off += k;
        }
    }

    /// `args->comm` (a char array) or `args->name` (a `__data_loc` string).
    fn write_field_string(&mut self, e: &Expr, place: Place, size: u32) {
        let Some(access) = self.probe.fields.get(&e.id) else {
            return;
        };
        let f = access.field.clone();
        let ctx = self.ctx();
        let src = self.asm.vreg();
        let len = match f.kind {
            FieldKind::DataLoc => {
                // Low 16 bits: offset of the data in the record; high 16: its length.
                self.asm.load(src, ctx, f.offset as i16, Width::W);
                self.asm.alu(AluOp::And, src, Src::Imm(0xffff));
                self.asm.alu(AluOp::Add, src, Src::Reg(ctx));
                size
            }
            _ => {
                self.asm.mov(src, Src::Reg(ctx));
                self.asm.alu(AluOp::Add, src, Src::Imm(f.offset as i32));
                f.size.min(size)
            }
        };
        // The helper stops at the NUL and leaves the rest as it was.
        self.zero_range(place, 0, size);
        let addr = self.addr(place);
        self.checked_call(
            Helper::PROBE_READ_KERNEL_STR,
            &[Src::Reg(addr), Src::Imm(len as i32), Src::Reg(src)],
            true,
        );
    }

    /// Whether `mem` finds the value where it already is (a variable, a map
    /// value, a tuple's element) rather than writing it into a temporary,
    /// which would come back here.
    fn held_in_memory(e: &Expr) -> bool {
        matches!(
            e.kind,
            ExprKind::Var(_) | ExprKind::Map { .. } | ExprKind::TupleIndex { .. }
        )
    }

    /// The memory holding a string or tuple value, and its size: a variable's
    /// own slot, or a new temporary the value is written into.
    pub(crate) fn mem(&mut self, e: &Expr) -> (Place, u32) {
        let t = self.ty(e);
        let size = t.layout().size();
        if let ExprKind::Var(name) = &e.kind
            && let Some(place) = self.var_place(e.id, name)
        {
            return (place, size);
        }
        if let ExprKind::Map { keys, .. } = &e.kind {
            return self.map_read_mem(e, keys);
        }
        if let Some((base_expr, index)) = self.field_of(e) {
            // A string, stack or tuple element lives inside its tuple or record.
            if let Some(&offset) = field_offsets(&self.ty(base_expr).layout()).get(index) {
                let (base, _) = self.mem(base_expr);
                return (base.offset(offset), size);
            }
        }
        let place = self.temp(&t);
        self.write_into(e, place, &t);
        (place, size)
    }

    /// [`Lower::mem`] for a string whose bytes are read only up to its NUL
    /// (compared with a literal, counted, searched): a `str()` made for it
    /// is not zeroed past its NUL first (1 KiB at the default `max_strlen`).
    pub(crate) fn mem_up_to_nul(&mut self, e: &Expr) -> (Place, u32) {
        let made_here = matches!(
            self.builtin_call(e),
            Some((lowering, _)) if lowering.name == "str"
        );
        let canonical = self.canonical;
        self.canonical = canonical && !made_here;
        let held = self.mem(e);
        self.canonical = canonical;
        held
    }

    /// String equality: byte by byte up to the first NUL.
    fn string_equal(&mut self, lhs: &Expr, rhs: &Expr) -> VReg {
        // Compare against a literal without materialising it.
        let (var_side, lit) = match (&lhs.kind, &rhs.kind) {
            (_, ExprKind::Str(b)) => (lhs, Some(b.clone())),
            (ExprKind::Str(b), _) => (rhs, Some(b.clone())),
            _ => (lhs, None),
        };
        let out = self.asm.vreg();
        let (differ, done) = (self.asm.label(), self.asm.label());
        let c = self.asm.vreg();
        match lit {
            Some(bytes) => {
                let (place, size) = self.mem_up_to_nul(var_side);
                let mut expect = bytes.clone();
                expect.push(0);
                if expect.len() as u32 > size + 1 {
                    // The literal cannot fit: never equal.
                    self.asm.mov(out, Src::Imm(0));
                    return out;
                }
                for (i, b) in expect.iter().enumerate() {
                    if i as u32 >= size {
                        break;
                    }
                    self.load(c, place.offset(i as u32), Width::B);
                    self.asm.br(Cond::Ne, c, Src::Imm(*b as i32), differ);
                }
            }
            None => {
                let (a, asize) = self.mem(lhs);
                let (b, bsize) = self.mem(rhs);
                let equal = self.asm.label();
                self.compare_bytes(a, b, asize.min(bsize), None, differ, equal);
                self.asm.bind(equal);
            }
        }
        self.asm.mov(out, Src::Imm(1));
        self.asm.jmp(done);
        self.asm.bind(differ);
        self.asm.mov(out, Src::Imm(0));
        self.asm.bind(done);
        out
    }

    /// Compares the strings at `a` and `b` over their first `n` bytes (and
    /// before a run-time `limit`): jumps to `differ` at the first byte that
    /// differs, to `equal` when they meet a NUL together or reach the end
    /// (falling through to `equal` too). Up to [`UNROLLED_COMPARE`] bytes
    /// are compared unrolled. Longer strings (only ever in the scratch
    /// buffer or a map value) go through a loop over 8 bytes at a time
    /// that folds each byte's difference into a word without branching,
    /// and leaves only after each 8: the verifier keeps every branch it
    /// cannot decide for later, and gives up past 8,192 of them.
    pub(crate) fn compare_bytes(
        &mut self,
        a: Place,
        b: Place,
        n: u32,
        limit: Option<VReg>,
        differ: crate::asm::Label,
        equal: crate::asm::Label,
    ) {
        let (c, d) = (self.asm.vreg(), self.asm.vreg());
        if n <= UNROLLED_COMPARE {
            for i in 0..n {
                if let Some(limit) = limit {
                    self.asm.br(Cond::Le, limit, Src::Imm(i as i32), equal);
                }
                self.load(c, a.offset(i), Width::B);
                self.load(d, b.offset(i), Width::B);
                self.asm.br(Cond::Ne, c, Src::Reg(d), differ);
                self.asm.br(Cond::Eq, c, Src::Imm(0), equal);
            }
            self.asm.jmp(equal);
            return;
        }
        // `limit`, at most `n`, so `i - limit` below keeps its sign.
        let limit = limit.map(|lim| {
            let clamped = self.asm.vreg();
            let within = self.asm.label();
            self.asm.mov(clamped, Src::Reg(lim));
            self.asm.br(Cond::Le, clamped, Src::Imm(n as i32), within);
            self.asm.mov(clamped, Src::Imm(n as i32));
            self.asm.bind(within);
            clamped
        });
        let fold = FoldedCompare {
            diff: self.asm.vreg(),
            ended: self.asm.vreg(),
            limit,
            c,
            d,
        };
        self.asm.mov(fold.diff, Src::Imm(0));
        self.asm.mov(fold.ended, Src::Imm(0));
        let (pa, pb, i) = (self.addr(a), self.addr(b), self.asm.vreg());
        let (top, tail) = (self.asm.label(), self.asm.label());
        let whole = n / 8 * 8;
        self.asm.mov(i, Src::Imm(0));
        self.asm.bind(top);
        self.asm.br(Cond::Ge, i, Src::Imm(whole as i32), tail);
        let (p, q) = (self.asm.vreg(), self.asm.vreg());
        self.asm.mov(p, Src::Reg(pa));
        self.asm.alu(AluOp::Add, p, Src::Reg(i));
        self.asm.mov(q, Src::Reg(pb));
        self.asm.alu(AluOp::Add, q, Src::Reg(i));
        for k in 0..8 {
            self.fold_byte(&fold, Place::Ptr(p, k), Place::Ptr(q, k), (i, k));
        }
        self.asm.br(Cond::Ne, fold.diff, Src::Imm(0), differ);
        self.asm.br(Cond::Ne, fold.ended, Src::Imm(0), equal);
        self.asm.alu(AluOp::Add, i, Src::Imm(8));
        self.asm.jmp(top);
        self.asm.bind(tail);
        for k in whole..n {
            // The tail's bytes are at known places; `i` holds the position.
            self.asm.mov(i, Src::Imm(k as i32));
            self.fold_byte(&fold, a.offset(k), b.offset(k), (i, 0));
        }
        self.asm.br(Cond::Ne, fold.diff, Src::Imm(0), differ);
        self.asm.jmp(equal);
    }

    /// One byte of [`Lower::compare_bytes`]'s loop, at position `i + k`:
    /// its difference joins `diff` while no NUL came before it (and it is
    /// before the limit); a NUL sets `ended`.
    fn fold_byte(&mut self, f: &FoldedCompare, a: Place, b: Place, (i, k): (VReg, i32)) {
        self.load(f.c, a, Width::B);
        self.load(f.d, b, Width::B);
        self.asm.alu(AluOp::Xor, f.d, Src::Reg(f.c));
        // All ones while no NUL came before (`ended` is 0 or 1).
        let live = self.asm.vreg();
        self.asm.mov(live, Src::Reg(f.ended));
        self.asm.alu(AluOp::Sub, live, Src::Imm(1));
        self.asm.alu(AluOp::And, f.d, Src::Reg(live));
        if let Some(limit) = f.limit {
            // All ones while the position is before the limit: the sign of `pos - limit`.
            let t = self.asm.vreg();
            self.asm.mov(t, Src::Reg(i));
            self.asm.alu(AluOp::Add, t, Src::Imm(k));
            self.asm.alu(AluOp::Sub, t, Src::Reg(limit));
            self.asm.alu(AluOp::Arsh, t, Src::Imm(63));
            self.asm.alu(AluOp::And, f.d, Src::Reg(t));
        }
        self.asm.alu(AluOp::Or, f.diff, Src::Reg(f.d));
        // 1 for a NUL: a byte minus one is negative only for 0.
        self.asm.alu(AluOp::Sub, f.c, Src::Imm(1));
        self.asm.alu(AluOp::Rsh, f.c, Src::Imm(63));
        self.asm.alu(AluOp::Or, f.ended, Src::Reg(f.c));
    }

    /// Equality of two values held in memory (arrays of one type, buffers
    /// of any sizes): every byte, in the widest loads alignment allows.
    fn bytes_equal(&mut self, lhs: &Expr, rhs: &Expr) -> VReg {
        let (a, n) = self.mem(lhs);
        let (b, m) = self.mem(rhs);
        // Buffers of two sizes: equal lengths are at most the smaller size,
        // and both are zero past their length.
        let n = n.min(m);
        let (c, d, out) = (self.asm.vreg(), self.asm.vreg(), self.asm.vreg());
        let (differ, done) = (self.asm.label(), self.asm.label());
        let mut off = 0;
        while off < n {
            let (w, k) = super::chunk(
                a.offset(off).base_offset() | b.offset(off).base_offset(),
                n - off,
            );
            self.load(c, a.offset(off), w);
            self.load(d, b.offset(off), w);
            self.asm.br(Cond::Ne, c, Src::Reg(d), differ);
            off += k;
        }
        self.asm.mov(out, Src::Imm(1));
        self.asm.jmp(done);
        self.asm.bind(differ);
        self.asm.mov(out, Src::Imm(0));
        self.asm.bind(done);
        out
    }

    fn inc_dec(&mut self, op: IncDecOp, prefix: bool, target: &Expr) -> VReg {
        // A pointer moves by the size of what it points to.
        let step = self.probe.scales.get(&target.id).copied().unwrap_or(1) as i32;
        let delta = if op == IncDecOp::Inc { step } else { -step };
        match &target.kind {
            ExprKind::Var(name) => {
                let r = self.asm.vreg();
                let Some(place) = self.var_place(target.id, name) else {
                    self.asm.mov(r, Src::Imm(0));
                    return r;
                };
                self.load(r, place, Width::DW);
                let new = self.asm.vreg();
                self.asm.mov(new, Src::Reg(r));
                self.asm.alu(AluOp::Add, new, Src::Imm(delta));
                self.store(place, Src::Reg(new), Width::DW);
                if prefix { new } else { r }
            }
            ExprKind::Map { keys, .. } => self.map_add(target, keys, None, delta, prefix),
            _ => self.constant(0),
        }
    }

    /// Where a scratch variable lives: its stack slot, or (in a stream clause)
    /// its field in the instance's state.
    /// The type of the value `e` as it is held in memory: a variable's
    /// storage type, which may be wider than the type it has where it is
    /// read (`$t = (1, 2); print($t); $t = (300, 2);` keeps 16-bit first
    /// fields), or the expression's own type.
    pub(crate) fn held_type(&self, e: &Expr) -> Type {
        match &e.kind {
            ExprKind::Var(name) => self
                .probe
                .vars
                .get(self.probe.var_key(e.id, name))
                .filter(|t| !matches!(t, Type::Void))
                .cloned()
                .unwrap_or_else(|| self.ty(e)),
            _ => self.ty(e),
        }
    }

    pub(crate) fn var_place(&self, id: syntax::ast::NodeId, name: &str) -> Option<Place> {
        self.vars.get(self.probe.var_key(id, name)).copied()
    }
}

/// The longest string comparison emitted byte by byte; longer ones loop.
const UNROLLED_COMPARE: u32 = 256;

/// The registers of [`Lower::compare_bytes`]'s folded loop.
struct FoldedCompare {
    /// The OR of every difference seen so far (0: equal so far).
    diff: VReg,
    /// 1 once a NUL was seen.
    ended: VReg,
    /// The run-time length, at most the bytes compared.
    limit: Option<VReg>,
    c: VReg,
    d: VReg,
}

/// The offset of each field of a tuple or record layout.
pub(crate) fn field_offsets(layout: &abi::Layout) -> Vec<u32> {
    match layout {
        abi::Layout::Tuple { fields, .. } => fields.iter().map(|f| f.offset).collect(),
        abi::Layout::Record { fields, .. } => fields.iter().map(|f| f.offset).collect(),
        _ => Vec::new(),
    }
}

/// The type of each field of a tuple or record.
fn elems(t: &Type) -> Vec<Type> {
    match t {
        Type::Tuple(ts) => ts.clone(),
        Type::Record(fs) => fs.iter().map(|(_, t)| t.clone()).collect(),
        _ => Vec::new(),
    }
}

/// The load or store width of an integer of `size` bytes.
pub(crate) fn width_of(size: u8) -> Width {
    match size {
        1 => Width::B,
        2 => Width::H,
        4 => Width::W,
        _ => Width::DW,
    }
}
