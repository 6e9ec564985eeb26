//! Map keys, reads, stores, deletes and the in-kernel part of aggregations.

use abi::{Aggregation, CounterIndex};
use sema::Type;
use syntax::ast::{BinaryOp, Expr};

use super::{Lower, Place};
use crate::asm::{AluOp, Cond, Helper, Src, VReg, Width};

/// `BPF_ANY` / `BPF_NOEXIST` flags of `bpf_map_update_elem`.
const BPF_ANY: i32 = 0;
pub(crate) const BPF_NOEXIST: i32 = 1;

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

    pub(crate) fn is_array(&self, index: usize) -> bool {
        self.arrays.get(index).copied().unwrap_or(false)
    }

    /// Builds the key of `@m[keys]` in a stack slot (or the scratch buffer,
    /// for a key too large for the stack). Every byte of the key is
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
        let place = self.value_place(size);
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
        self.lookup_with(index, key, None)
    }

    /// [`Lower::lookup`], or with `cpu` `bpf_map_lookup_percpu_elem`: that
    /// CPU's value of a per-CPU map.
    fn lookup_with(&mut self, index: usize, key: Place, cpu: Option<VReg>) -> VReg {
        let map = self.asm.vreg();
        let symbol = self.maps[index].bpf_name.clone();
        self.asm.map_ptr(map, &symbol);
        let key_ptr = self.addr(key);
        let value = self.asm.vreg();
        match cpu {
            None => self.asm.call(
                Helper::MAP_LOOKUP_ELEM,
                &[Src::Reg(map), Src::Reg(key_ptr)],
                Some(value),
            ),
            Some(cpu) => self.asm.call(
                Helper::MAP_LOOKUP_PERCPU_ELEM,
                &[Src::Reg(map), Src::Reg(key_ptr), Src::Reg(cpu)],
                Some(value),
            ),
        }
        value
    }

    /// `bpf_map_update_elem`; a failure (the map is full) is counted.
    fn update(&mut self, index: usize, key: Place, value: Place, flags: i32) {
        let map = self.asm.vreg();
        let symbol = self.maps[index].bpf_name.clone();
        self.asm.map_ptr(map, &symbol);
        let key_ptr = self.addr(key);
        let value_ptr = self.addr(value);
        let ret = self.checked_call(
            Helper::MAP_UPDATE_ELEM,
            &[
                Src::Reg(map),
                Src::Reg(key_ptr),
                Src::Reg(value_ptr),
                Src::Imm(flags),
            ],
            false,
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
        if let Type::Agg(agg) = &self.typed.maps[index].value {
            let agg = agg.clone();
            return self.aggregation_read(index, key, &agg);
        }
        let value = self.lookup(index, key);
        self.check_lookup(value, e.span);
        let out = self.asm.vreg();
        let done = self.asm.label();
        self.asm.mov(out, Src::Imm(0));
        self.asm.br(Cond::Eq, value, Src::Imm(0), done);
        let w = super::scalar_width(&self.ty(e));
        self.asm.load(out, value, 0, w);
        self.asm.bind(done);
        out
    }

    /// The value of an aggregation element merged over every CPU, as user
    /// space merges it when printing: counts and sums add up, min and max
    /// keep the extreme of the CPUs that saw a value, avg divides the summed
    /// total by the summed count; a missing element reads as 0. The CPUs are
    /// walked on the numeric iterator (`0..ncpus`) with
    /// `bpf_map_lookup_percpu_elem`, so the verifier sees one loop body
    /// whatever the machine's CPU count.
    pub(crate) fn aggregation_read(&mut self, index: usize, key: Place, agg: &Aggregation) -> VReg {
        let acc = self.asm.vreg();
        let count = self.asm.vreg();
        self.asm.mov(acc, Src::Imm(0));
        self.asm.mov(count, Src::Imm(0));
        if self.probe.range_iter.is_none() {
            return acc;
        }
        let signed = agg.read_signedness().unwrap_or(false);
        let iter = self.asm.stack(8);
        let ncpus = self.global(abi::GLOBAL_NCPUS);
        let zero = self.asm.vreg();
        self.asm.mov(zero, Src::Imm(0));
        self.start_range_iter(iter, zero, ncpus);
        let (top, done) = (self.asm.label(), self.asm.label());
        self.asm.bind(top);
        let cpu = self.next_range_value(iter, done);
        let value = self.lookup_with(index, key, Some(cpu));
        self.asm.br(Cond::Eq, value, Src::Imm(0), top);
        let field = self.asm.vreg();
        match agg {
            Aggregation::Avg { .. } => {
                // `count: u64, total: i64`.
                self.asm.load(field, value, 0, Width::DW);
                self.asm.alu(AluOp::Add, count, Src::Reg(field));
                let total = self.asm.vreg();
                self.asm.load(total, value, 8, Width::DW);
                self.asm.alu(AluOp::Add, acc, Src::Reg(total));
            }
            Aggregation::Min { .. } | Aggregation::Max { .. } => {
                // `value: i64, set: u64`; `count` says whether `acc` holds one yet.
                let set = self.asm.vreg();
                self.asm.load(set, value, 8, Width::DW);
                self.asm.br(Cond::Eq, set, Src::Imm(0), top);
                self.asm.load(field, value, 0, Width::DW);
                let take = self.asm.label();
                self.asm.br(Cond::Eq, count, Src::Imm(0), take);
                let is_min = matches!(agg, Aggregation::Min { .. });
                let keep = match (is_min, signed) {
                    (true, true) => Cond::SGe,
                    (true, false) => Cond::Ge,
                    (false, true) => Cond::SLe,
                    (false, false) => Cond::Le,
                };
                self.asm.br(keep, field, Src::Reg(acc), top);
                self.asm.bind(take);
                self.asm.mov(acc, Src::Reg(field));
                self.asm.mov(count, Src::Imm(1));
            }
            _ => {
                self.asm.load(field, value, 0, Width::DW);
                self.asm.alu(AluOp::Add, acc, Src::Reg(field));
            }
        }
        self.asm.jmp(top);
        self.asm.bind(done);
        self.destroy_range_iter(iter);
        if matches!(agg, Aggregation::Avg { .. }) {
            let none = self.asm.label();
            let out = self.asm.vreg();
            self.asm.mov(out, Src::Imm(0));
            self.asm.br(Cond::Eq, count, Src::Imm(0), none);
            self.asm.mov(out, Src::Reg(acc));
            let div = if signed { AluOp::SDiv } else { AluOp::Div };
            self.asm.alu(div, out, Src::Reg(count));
            self.asm.bind(none);
            return out;
        }
        acc
    }

    /// Copies a string or tuple map value to a temporary (zeros when missing).
    pub(crate) fn map_read_mem(&mut self, e: &Expr, keys: &[Expr]) -> (Place, u32) {
        let index = self.map_index(e);
        let t = self.typed.maps[index].value.clone();
        let size = t.layout().size();
        let place = self.temp(&t);
        let key = self.map_key(index, keys);
        let value = self.lookup(index, key);
        self.check_lookup(value, e.span);
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
        // The store is the map's: `-k` reports a failure at `@m[k]`.
        self.set_span(target.span);
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
                if let Some(&scale) = self.probe.scales.get(&target.id)
                    && scale != 1
                {
                    // A pointer moves by the size of what it points to.
                    self.asm.alu(AluOp::Mul, r, Src::Imm(scale as i32));
                }
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
                if matches!(op, BinaryOp::Div | BinaryOp::Mod) {
                    self.divide(alu, new, r, target.id);
                } else {
                    self.asm.alu(alu, new, Src::Reg(r));
                }
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
    /// Deletes `target[keys]`; the register holds the helper's result (0
    /// when the element was there).
    pub(crate) fn map_delete(&mut self, target: &Expr, keys: &[Expr]) -> VReg {
        let index = self.map_index(target);
        let key = self.map_key(index, keys);
        let map = self.asm.vreg();
        let symbol = self.maps[index].bpf_name.clone();
        self.asm.map_ptr(map, &symbol);
        let key_ptr = self.addr(key);
        let ret = self.asm.vreg();
        self.asm.call(
            Helper::MAP_DELETE_ELEM,
            &[Src::Reg(map), Src::Reg(key_ptr)],
            Some(ret),
        );
        ret
    }
}
