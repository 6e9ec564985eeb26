//! Map keys, reads, stores, deletes and the in-kernel part of aggregations.

use abi::{Aggregation, CounterIndex, HIST_BUCKETS};
use sema::Type;
use syntax::ast::{BinaryOp, Expr};

use super::{Lower, Place};
use crate::asm::{AluOp, Cond, Helper, Src, VReg, Width};

/// `BPF_ANY` / `BPF_NOEXIST` flags of `bpf_map_update_elem`.
const BPF_ANY: i32 = 0;
const BPF_NOEXIST: i32 = 1;

impl Lower<'_> {
    /// A pointer to the zero map's value (zeros as large as any map value
    /// or record), or null if the lookup fails: the source of fresh entries
    /// too large to build on the stack.
    pub(crate) fn zero_value(&mut self) -> VReg {
        let zkey = self.asm.stack(8);
        self.asm.store_stack(zkey, 0, Src::Imm(0), Width::DW);
        let zmap = self.asm.vreg();
        self.asm.map_ptr(zmap, abi::ZERO_MAP);
        let zkey_ptr = self.asm.vreg();
        self.asm.stack_addr(zkey_ptr, zkey, 0);
        let zero = self.asm.vreg();
        self.asm.call(
            Helper::MAP_LOOKUP_ELEM,
            &[Src::Reg(zmap), Src::Reg(zkey_ptr)],
            Some(zero),
        );
        zero
    }

    fn is_array(&self, index: usize) -> bool {
        self.arrays.get(index).copied().unwrap_or(false)
    }

    /// Builds the key of `@m[keys]` in a stack slot. Every byte of the key is
    /// written, padding included: the kernel hashes every byte, and equal
    /// keys must be equal bytes (strings are zero past their terminator).
    pub(crate) fn map_key(&mut self, index: usize, keys: &[Expr]) -> Place {
        if self.is_array(index) {
            let slot = self.asm.stack(4);
            self.asm.store_stack(slot, 0, Src::Imm(0), Width::W);
            return Place::Stack(slot, 0);
        }
        let key_ty = self.typed.maps[index].key.clone();
        let size = self.maps[index].key_size().next_multiple_of(8);
        let slot = self.asm.stack(size);
        let place = Place::Stack(slot, 0);
        // A key is canonical even when read for a printf argument.
        let canonical = std::mem::replace(&mut self.canonical, true);
        self.build_key(place, size, key_ty, keys);
        self.canonical = canonical;
        place
    }

    fn build_key(&mut self, place: Place, size: u32, key_ty: Option<Type>, keys: &[Expr]) {
        match (key_ty, keys) {
            // A map without keys: its one entry has key 0.
            (None, _) | (_, []) => self.zero(place, size),
            (Some(Type::Tuple(elems)), [_, _, ..]) => {
                let layout = Type::Tuple(elems.clone()).layout();
                let abi::Layout::Tuple { fields, .. } = &layout else {
                    return;
                };
                for ((k, field), t) in keys.iter().zip(fields).zip(&elems) {
                    self.write_into(k, place.offset(field.offset), t);
                }
                self.zero_padding(place, &layout);
            }
            (Some(t), [k]) => self.write_into(k, place, &t),
            (Some(_), _) => self.zero(place, size),
        }
    }

    /// `bpf_map_lookup_elem(&map, key)`: a pointer to the value, or 0.
    pub(crate) fn lookup(&mut self, index: usize, key: Place) -> VReg {
        let map = self.asm.vreg();
        let symbol = self.maps[index].bpf_name.clone();
        self.asm.map_ptr(map, &symbol);
        let key_ptr = self.addr(key);
        let value = self.asm.vreg();
        self.asm.call(
            Helper::MAP_LOOKUP_ELEM,
            &[Src::Reg(map), Src::Reg(key_ptr)],
            Some(value),
        );
        value
    }

    /// `bpf_map_update_elem`; a failure (the map is full) is counted.
    fn update(&mut self, index: usize, key: Place, value: Place, flags: i32) {
        let map = self.asm.vreg();
        let symbol = self.maps[index].bpf_name.clone();
        self.asm.map_ptr(map, &symbol);
        let key_ptr = self.addr(key);
        let value_ptr = self.addr(value);
        let ret = self.asm.vreg();
        self.asm.call(
            Helper::MAP_UPDATE_ELEM,
            &[
                Src::Reg(map),
                Src::Reg(key_ptr),
                Src::Reg(value_ptr),
                Src::Imm(flags),
            ],
            Some(ret),
        );
        let ok = self.asm.label();
        self.asm.br(Cond::SGe, ret, Src::Imm(0), ok);
        self.count_loss(CounterIndex::MapFull);
        self.asm.bind(ok);
    }

    /// Reads a scalar map value; a missing key reads as 0, as in bpftrace.
    pub(crate) fn map_read_scalar(&mut self, e: &Expr, keys: &[Expr]) -> VReg {
        let index = self.map_index(e);
        let key = self.map_key(index, keys);
        let value = self.lookup(index, key);
        let out = self.asm.vreg();
        let done = self.asm.label();
        self.asm.mov(out, Src::Imm(0));
        self.asm.br(Cond::Eq, value, Src::Imm(0), done);
        self.asm.load(out, value, 0, Width::DW);
        self.asm.bind(done);
        out
    }

    /// Copies a string or tuple map value to a temporary (zeros when missing).
    pub(crate) fn map_read_mem(&mut self, e: &Expr, keys: &[Expr]) -> (Place, u32) {
        let index = self.map_index(e);
        let t = self.typed.maps[index].value.clone();
        let size = t.layout().size();
        let place = self.temp(&t);
        let key = self.map_key(index, keys);
        let value = self.lookup(index, key);
        let (missing, done) = (self.asm.label(), self.asm.label());
        self.asm.br(Cond::Eq, value, Src::Imm(0), missing);
        self.copy(place, Place::Ptr(value, 0), size);
        self.asm.jmp(done);
        // A missing key reads as zeros, as in bpftrace.
        self.asm.bind(missing);
        self.zero(place, size);
        self.asm.bind(done);
        (place, size)
    }

    /// `@m[k] = value` for a plain (non-aggregation) map.
    pub(crate) fn map_store(&mut self, target: &Expr, keys: &[Expr], value: &Expr) {
        let index = self.map_index(target);
        let t = self.typed.maps[index].value.clone();
        let val = self.temp(&t);
        self.write_into(value, val, &t);
        let key = self.map_key(index, keys);
        self.update(index, key, val, BPF_ANY);
    }

    /// `@m[k] op= value`, `@m[k]++`: read (0 when missing), combine, store.
    /// Returns the old value (`prefix == false`) or the new one.
    pub(crate) fn map_add(
        &mut self,
        target: &Expr,
        keys: &[Expr],
        value: Option<(BinaryOp, &Expr)>,
        delta: i32,
        prefix: bool,
    ) -> VReg {
        let index = self.map_index(target);
        let key = self.map_key(index, keys);
        let ptr = self.lookup(index, key);
        let old = self.asm.vreg();
        let have = self.asm.label();
        self.asm.mov(old, Src::Imm(0));
        let skip = self.asm.label();
        self.asm.br(Cond::Eq, ptr, Src::Imm(0), skip);
        self.asm.load(old, ptr, 0, Width::DW);
        self.asm.bind(skip);
        let new = self.asm.vreg();
        self.asm.mov(new, Src::Reg(old));
        match value {
            Some((op, rhs)) => {
                let signed = self.ty(rhs).is_signed() || self.typed.maps[index].value.is_signed();
                let r = self.scalar(rhs);
                let alu = match op {
                    BinaryOp::Add => AluOp::Add,
                    BinaryOp::Sub => AluOp::Sub,
                    BinaryOp::Mul => AluOp::Mul,
                    BinaryOp::Div if signed => AluOp::SDiv,
                    BinaryOp::Div => AluOp::Div,
                    BinaryOp::Mod if signed => AluOp::SMod,
                    BinaryOp::Mod => AluOp::Mod,
                    BinaryOp::BitAnd => AluOp::And,
                    BinaryOp::BitOr => AluOp::Or,
                    BinaryOp::BitXor => AluOp::Xor,
                    BinaryOp::Shl => AluOp::Lsh,
                    BinaryOp::Shr => AluOp::Rsh,
                    _ => AluOp::Add,
                };
                self.asm.alu(alu, new, Src::Reg(r));
            }
            None => self.asm.alu(AluOp::Add, new, Src::Imm(delta)),
        }
        let _ = have;
        let slot = self.asm.stack(8);
        self.asm.store_stack(slot, 0, Src::Reg(new), Width::DW);
        self.update(index, key, Place::Stack(slot, 0), BPF_ANY);
        if prefix { new } else { old }
    }

    /// `delete(@m[k])`.
    pub(crate) fn map_delete(&mut self, target: &Expr, keys: &[Expr]) {
        let index = self.map_index(target);
        let key = self.map_key(index, keys);
        let map = self.asm.vreg();
        let symbol = self.maps[index].bpf_name.clone();
        self.asm.map_ptr(map, &symbol);
        let key_ptr = self.addr(key);
        self.asm.call(
            Helper::MAP_DELETE_ELEM,
            &[Src::Reg(map), Src::Reg(key_ptr)],
            None,
        );
    }

    /// `@m[k] = agg(args)`: find (or create, zeroed) this CPU's value and fold the argument in.
    pub(crate) fn aggregate(
        &mut self,
        target: &Expr,
        keys: &[Expr],
        agg: &Aggregation,
        args: &[Expr],
    ) {
        let index = self.map_index(target);
        // Evaluate the argument before touching the map, as written.
        let arg = args.first().map(|a| self.scalar(a));
        let key = self.map_key(index, keys);
        let ptr = self.lookup(index, key);
        let found = self.asm.label();
        let done = self.asm.label();
        if self.is_array(index) {
            // The entry always exists; the check is for the verifier.
            self.asm.br(Cond::Eq, ptr, Src::Imm(0), done);
            self.fold(ptr, agg, arg);
            self.asm.bind(done);
            return;
        }
        self.asm.br(Cond::Ne, ptr, Src::Imm(0), found);
        // First time for this key: insert zeros from the zero map (values can be larger than the stack).
        let zero = self.zero_value();
        self.asm.br(Cond::Eq, zero, Src::Imm(0), done);
        let map = self.asm.vreg();
        let symbol = self.maps[index].bpf_name.clone();
        self.asm.map_ptr(map, &symbol);
        let key_ptr = self.addr(key);
        self.asm.call(
            Helper::MAP_UPDATE_ELEM,
            &[
                Src::Reg(map),
                Src::Reg(key_ptr),
                Src::Reg(zero),
                Src::Imm(BPF_NOEXIST),
            ],
            None,
        );
        let again = self.lookup(index, key);
        self.asm.mov(ptr, Src::Reg(again));
        let ok = self.asm.label();
        self.asm.br(Cond::Ne, ptr, Src::Imm(0), ok);
        self.count_loss(CounterIndex::MapFull);
        self.asm.jmp(done);
        self.asm.bind(ok);
        self.asm.bind(found);
        self.fold(ptr, agg, arg);
        self.asm.bind(done);
    }

    /// Folds one value into a per-CPU aggregation value at `ptr` (see `abi::Aggregation`).
    fn fold(&mut self, ptr: VReg, agg: &Aggregation, arg: Option<VReg>) {
        let t = self.asm.vreg();
        let v = arg.unwrap_or(t);
        match agg {
            Aggregation::Count => {
                self.asm.load(t, ptr, 0, Width::DW);
                self.asm.alu(AluOp::Add, t, Src::Imm(1));
                self.asm.store(ptr, 0, Src::Reg(t), Width::DW);
            }
            Aggregation::Sum { .. } => {
                self.asm.load(t, ptr, 0, Width::DW);
                self.asm.alu(AluOp::Add, t, Src::Reg(v));
                self.asm.store(ptr, 0, Src::Reg(t), Width::DW);
            }
            Aggregation::Avg { .. } | Aggregation::Stats { .. } => {
                self.asm.load(t, ptr, 0, Width::DW);
                self.asm.alu(AluOp::Add, t, Src::Imm(1));
                self.asm.store(ptr, 0, Src::Reg(t), Width::DW);
                self.asm.load(t, ptr, 8, Width::DW);
                self.asm.alu(AluOp::Add, t, Src::Reg(v));
                self.asm.store(ptr, 8, Src::Reg(t), Width::DW);
            }
            Aggregation::Min { signed } | Aggregation::Max { signed } => {
                let is_min = matches!(agg, Aggregation::Min { .. });
                let (set, keep) = (self.asm.label(), self.asm.label());
                self.asm.load(t, ptr, 8, Width::DW);
                self.asm.br(Cond::Eq, t, Src::Imm(0), set);
                self.asm.load(t, ptr, 0, Width::DW);
                // Keep the current value unless the new one is better.
                let cond = match (is_min, signed) {
                    (true, true) => Cond::SGe,
                    (true, false) => Cond::Ge,
                    (false, true) => Cond::SLe,
                    (false, false) => Cond::Le,
                };
                self.asm.br(cond, v, Src::Reg(t), keep);
                self.asm.bind(set);
                self.asm.store(ptr, 0, Src::Reg(v), Width::DW);
                self.asm.store(ptr, 8, Src::Imm(1), Width::DW);
                self.asm.bind(keep);
            }
            Aggregation::Hist => {
                let idx = self.log2_bucket(v);
                self.bump_bucket(ptr, idx, HIST_BUCKETS - 1);
            }
            Aggregation::Lhist { min, max, step } => {
                let buckets = agg.lhist_buckets();
                let idx = self.asm.vreg();
                let (below, above, done) = (self.asm.label(), self.asm.label(), self.asm.label());
                let lo = self.constant(*min);
                self.asm.br(Cond::SLt, v, Src::Reg(lo), below);
                let hi = self.constant(*max);
                self.asm.br(Cond::SGe, v, Src::Reg(hi), above);
                self.asm.mov(idx, Src::Reg(v));
                self.asm.alu(AluOp::Sub, idx, Src::Reg(lo));
                let st = self.constant(*step);
                self.asm.alu(AluOp::Div, idx, Src::Reg(st));
                self.asm.alu(AluOp::Add, idx, Src::Imm(1));
                self.asm.jmp(done);
                self.asm.bind(below);
                self.asm.mov(idx, Src::Imm(0));
                self.asm.jmp(done);
                self.asm.bind(above);
                self.asm.mov(idx, Src::Imm(buckets as i32 - 1));
                self.asm.bind(done);
                self.bump_bucket(ptr, idx, buckets - 1);
            }
        }
    }

    /// `ptr[idx] += 1` with `idx` clamped to `max` so the verifier sees the bound.
    fn bump_bucket(&mut self, ptr: VReg, idx: VReg, max: u32) {
        let ok = self.asm.label();
        self.asm.br(Cond::Le, idx, Src::Imm(max as i32), ok);
        self.asm.mov(idx, Src::Imm(max as i32));
        self.asm.bind(ok);
        self.asm.alu(AluOp::Lsh, idx, Src::Imm(3));
        let slot = self.asm.vreg();
        self.asm.mov(slot, Src::Reg(ptr));
        self.asm.alu(AluOp::Add, slot, Src::Reg(idx));
        let n = self.asm.vreg();
        self.asm.load(n, slot, 0, Width::DW);
        self.asm.alu(AluOp::Add, n, Src::Imm(1));
        self.asm.store(slot, 0, Src::Reg(n), Width::DW);
    }

    /// hist() bucket: 0 for negative, 1 for zero, `floor(log2(v)) + 2` otherwise.
    fn log2_bucket(&mut self, v: VReg) -> VReg {
        let idx = self.asm.vreg();
        let x = self.asm.vreg();
        let done = self.asm.label();
        self.asm.mov(idx, Src::Imm(0));
        self.asm.br(Cond::SLt, v, Src::Imm(0), done);
        self.asm.mov(idx, Src::Imm(1));
        self.asm.br(Cond::Eq, v, Src::Imm(0), done);
        self.asm.mov(x, Src::Reg(v));
        self.asm.mov(idx, Src::Imm(2));
        for shift in [32, 16, 8, 4, 2, 1] {
            let skip = self.asm.label();
            let bound = match i32::try_from(1i64 << shift) {
                Ok(k) => Src::Imm(k),
                Err(_) => {
                    let r = self.asm.vreg();
                    self.asm.imm64(r, 1i64 << shift);
                    Src::Reg(r)
                }
            };
            self.asm.br(Cond::Lt, x, bound, skip);
            self.asm.alu(AluOp::Rsh, x, Src::Imm(shift));
            self.asm.alu(AluOp::Add, idx, Src::Imm(shift));
            self.asm.bind(skip);
        }
        self.asm.bind(done);
        idx
    }
}
