//! Aggregations (rules in `sema::builtins::aggregations`): `@m[k] =
//! agg(args)` finds this CPU's element (creating it from the zero map the
//! first time, counting a full map as a loss) and folds the argument into
//! it, laid out as `abi::Aggregation` says; user space merges the CPUs.

use abi::{Aggregation, CounterIndex, hist_buckets};
use sema::Type;
use syntax::ast::Expr;

use super::{CallSite, Lowering};
use crate::asm::{AluOp, Cond, Helper, Src, VReg, Width};
use crate::lower::Lower;
use crate::lower::maps::BPF_NOEXIST;

/// One aggregation's lowering: [`into_map`] for every one.
const fn lowering(name: &'static str) -> Lowering {
    Lowering {
        name,
        aggregate: Some(into_map),
        ..Lowering::NONE
    }
}

pub(crate) const COUNT: Lowering = lowering("count");
pub(crate) const SUM: Lowering = lowering("sum");
pub(crate) const AVG: Lowering = lowering("avg");
pub(crate) const MIN: Lowering = lowering("min");
pub(crate) const MAX: Lowering = lowering("max");
pub(crate) const STATS: Lowering = lowering("stats");
pub(crate) const HIST: Lowering = lowering("hist");
pub(crate) const LHIST: Lowering = lowering("lhist");

pub(super) fn into_map(l: &mut Lower<'_>, call: &CallSite<'_>, target: &Expr, keys: &[Expr]) {
    // The checker typed the call as the aggregation, parameters included.
    let Type::Agg(agg) = l.ty(call.expr) else {
        return;
    };
    l.aggregate(target, keys, &agg, call.args);
}

impl Lower<'_> {
    /// `@m[k] = agg(args)`: find (or create, zeroed) this CPU's value and fold the argument in.
    fn aggregate(&mut self, target: &Expr, keys: &[Expr], agg: &Aggregation, args: &[Expr]) {
        let index = self.map_index(target);
        // The map's aggregation (its signedness unified over every
        // assignment), not this call's: `min(-9)` then `min(4)` compare
        // signed in both places, as user space merges them.
        let unified = match &self.typed.maps[index].value {
            Type::Agg(unified) => unified.clone(),
            _ => agg.clone(),
        };
        let agg = &unified;
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
            Aggregation::Hist { bits } => {
                let idx = if *bits == 0 {
                    self.log2_bucket(v)
                } else {
                    self.fine_log2_bucket(v, *bits)
                };
                self.bump_bucket(ptr, idx, hist_buckets(*bits) - 1);
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
            Aggregation::Tseries {
                interval_ns,
                intervals,
                agg,
                signed,
            } => self.fold_tseries(ptr, *interval_ns, *intervals, *agg, *signed, v),
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
        self.add_floor_log2(x, idx);
        self.asm.bind(done);
        idx
    }

    /// Adds floor(log2(x)) of a positive `x` to `acc` by binary search
    /// (shifts of 32, 16, ... 1); `x` is shifted down to 1 on the way.
    fn add_floor_log2(&mut self, x: VReg, acc: VReg) {
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
            self.asm.alu(AluOp::Add, acc, Src::Imm(shift));
            self.asm.bind(skip);
        }
    }

    /// `hist(n, bits)` bucket, as bpftrace's `log2(n, k)`: 0 for negative,
    /// `1 + v` below `2^bits`, else `((l - bits + 1) << bits) + 1` plus the
    /// `bits` bits after the leading one, where `l = floor(log2(v))`.
    fn fine_log2_bucket(&mut self, v: VReg, bits: u8) -> VReg {
        let mask = (1i32 << bits) - 1;
        let idx = self.asm.vreg();
        let x = self.asm.vreg();
        let l = self.asm.vreg();
        let done = self.asm.label();
        let large = self.asm.label();
        self.asm.mov(idx, Src::Imm(0));
        self.asm.br(Cond::SLt, v, Src::Imm(0), done);
        self.asm.br(Cond::Gt, v, Src::Imm(mask), large);
        self.asm.mov(idx, Src::Reg(v));
        self.asm.alu(AluOp::Add, idx, Src::Imm(1));
        self.asm.jmp(done);
        self.asm.bind(large);
        self.asm.mov(x, Src::Reg(v));
        self.asm.mov(l, Src::Imm(0));
        self.add_floor_log2(x, l);
        // l >= bits here, since v > mask.
        self.asm.alu(AluOp::Sub, l, Src::Imm(i32::from(bits)));
        self.asm.mov(x, Src::Reg(v));
        self.asm.alu(AluOp::Rsh, x, Src::Reg(l));
        self.asm.alu(AluOp::And, x, Src::Imm(mask));
        self.asm.mov(idx, Src::Reg(l));
        self.asm.alu(AluOp::Add, idx, Src::Imm(1));
        self.asm.alu(AluOp::Lsh, idx, Src::Imm(i32::from(bits)));
        self.asm.alu(AluOp::Add, idx, Src::Reg(x));
        self.asm.alu(AluOp::Add, idx, Src::Imm(1));
        self.asm.bind(done);
        idx
    }
}
