//! `tseries(n, interval, intervals[, agg])` (rule in
//! `sema::builtins::tseries`): an aggregation, so `@m[k] = tseries(...)`
//! finds this CPU's element as every aggregation does
//! (`aggregations::into_map`); [`Lower::fold_tseries`] then writes the
//! value into the interval of the current epoch (the TAI clock, or the
//! `BPFTRACE_DUMMY_TS_MAP` map, divided by the interval), clearing an
//! interval left from an older epoch first when values are folded.

use abi::{TSERIES_SLOT, TseriesAgg};

use super::Lowering;
use super::aggregations::into_map;
use crate::asm::{AluOp, Cond, Helper, Src, VReg, Width};
use crate::lower::Lower;

pub(crate) const DEF: Lowering = Lowering {
    name: "tseries",
    aggregate: Some(into_map),
    ..Lowering::NONE
};

/// Offsets in one interval (see `abi::Aggregation`).
const VALUE: i16 = 0;
const META: i16 = 8;
const EPOCH: i16 = 16;

impl Lower<'_> {
    /// Folds `v` into the interval of the current epoch of the per-CPU
    /// value at `ptr` (`intervals` slots of `abi::TSERIES_SLOT` bytes).
    pub(crate) fn fold_tseries(
        &mut self,
        ptr: VReg,
        interval_ns: u64,
        intervals: u32,
        agg: TseriesAgg,
        signed: bool,
        v: VReg,
    ) {
        let now = self.tseries_now();
        let epoch = self.asm.vreg();
        self.asm.mov(epoch, Src::Reg(now));
        let interval = self.constant(interval_ns as i64);
        self.asm.alu(AluOp::Div, epoch, Src::Reg(interval));
        let slot = self.asm.vreg();
        self.asm.mov(slot, Src::Reg(epoch));
        let count = self.constant(i64::from(intervals));
        self.asm.alu(AluOp::Mod, slot, Src::Reg(count));
        // Bounded for the verifier (the remainder already is).
        let bounded = self.asm.label();
        let last = intervals as i32 - 1;
        self.asm.br(Cond::Le, slot, Src::Imm(last), bounded);
        self.asm.mov(slot, Src::Imm(last));
        self.asm.bind(bounded);
        self.asm.alu(AluOp::Mul, slot, Src::Imm(TSERIES_SLOT as i32));
        self.asm.alu(AluOp::Add, slot, Src::Reg(ptr));
        // The epoch is stored plus one: 0 marks an interval never written.
        let tag = epoch;
        self.asm.alu(AluOp::Add, tag, Src::Imm(1));
        let t = self.asm.vreg();
        if agg != TseriesAgg::Last {
            let current = self.asm.label();
            self.asm.load(t, slot, EPOCH, Width::DW);
            self.asm.br(Cond::Eq, t, Src::Reg(tag), current);
            self.asm.store(slot, VALUE, Src::Imm(0), Width::DW);
            self.asm.store(slot, META, Src::Imm(0), Width::DW);
            self.asm.bind(current);
        }
        match agg {
            TseriesAgg::Last => {
                self.asm.store(slot, VALUE, Src::Reg(v), Width::DW);
                self.asm.store(slot, META, Src::Reg(now), Width::DW);
            }
            TseriesAgg::Sum | TseriesAgg::Avg => {
                self.asm.load(t, slot, VALUE, Width::DW);
                self.asm.alu(AluOp::Add, t, Src::Reg(v));
                self.asm.store(slot, VALUE, Src::Reg(t), Width::DW);
                if agg == TseriesAgg::Avg {
                    self.asm.load(t, slot, META, Width::DW);
                    self.asm.alu(AluOp::Add, t, Src::Imm(1));
                    self.asm.store(slot, META, Src::Reg(t), Width::DW);
                }
            }
            TseriesAgg::Min | TseriesAgg::Max => {
                let (set, keep) = (self.asm.label(), self.asm.label());
                self.asm.load(t, slot, META, Width::DW);
                self.asm.br(Cond::Eq, t, Src::Imm(0), set);
                self.asm.load(t, slot, VALUE, Width::DW);
                // Keep the current value unless the new one is better.
                let cond = match (agg == TseriesAgg::Min, signed) {
                    (true, true) => Cond::SGe,
                    (true, false) => Cond::Ge,
                    (false, true) => Cond::SLe,
                    (false, false) => Cond::Le,
                };
                self.asm.br(cond, v, Src::Reg(t), keep);
                self.asm.bind(set);
                self.asm.store(slot, VALUE, Src::Reg(v), Width::DW);
                self.asm.store(slot, META, Src::Imm(1), Width::DW);
                self.asm.bind(keep);
            }
        }
        self.asm.store(slot, EPOCH, Src::Reg(tag), Width::DW);
    }

    /// The time a `tseries()` files its value under: the kernel's TAI clock
    /// (as bpftrace's `sw_tai`), or the value of the `BPFTRACE_DUMMY_TS_MAP`
    /// map (0 while it has none).
    fn tseries_now(&mut self) -> VReg {
        let Some(index) = self.typed.dummy_clock else {
            return self.helper_value(Helper::KTIME_GET_TAI_NS);
        };
        let key = self.map_key(index, &[]);
        let value = self.lookup(index, key);
        let now = self.asm.vreg();
        let done = self.asm.label();
        self.asm.mov(now, Src::Imm(0));
        self.asm.br(Cond::Eq, value, Src::Imm(0), done);
        let width = crate::lower::scalar_width(&self.typed.maps[index].value);
        self.asm.load(now, value, 0, width);
        self.asm.bind(done);
        now
    }
}
