//! Emission: ops with their allocated locations become raw instructions
//! (spilled operands reloaded through the scratch registers, call arguments
//! moved in parallel), with labels resolved into jump offsets and map
//! references into relocations.

use source::Span;

use super::alloc::{LocFinal, SCRATCH};
use super::model::{AsmError, Base, Function, Label, Op, Reloc, Src, VReg};
use crate::insn::{AluCode, Insn, Reg, Size};

/// Turns allocated ops into `frame_size`'s function.
pub(super) fn emit(
    ops: &[Op],
    spans: &[Span],
    loc: &[Option<LocFinal>],
    frame_size: u32,
) -> Result<Function, AsmError> {
    let mut em = Emitter::new(loc);
    // Most ops are one instruction; spills and argument moves add a few.
    em.insns.reserve(ops.len() + ops.len() / 2);
    em.spans.reserve(ops.len() + ops.len() / 2);
    for (op, span) in ops.iter().zip(spans) {
        em.span = *span;
        em.op(op);
    }
    em.resolve()?;
    Ok(Function {
        insns: em.insns,
        spans: em.spans,
        relocs: em.relocs,
        func_refs: em.func_refs,
        frame_size,
    })
}

struct Emitter<'a> {
    loc: &'a [Option<LocFinal>],
    insns: Vec<Insn>,
    spans: Vec<Span>,
    relocs: Vec<Reloc>,
    func_refs: Vec<Reloc>,
    span: Span,
    /// Slot index of each label, by label number (`usize::MAX`: not bound yet).
    labels: Vec<usize>,
    /// (slot index, label) of jumps to patch.
    fixups: Vec<(usize, Label)>,
    /// Slot index of the most recent label binding.
    last_bind: usize,
}

pub(super) const S1: Reg = SCRATCH[0];
pub(super) const S2: Reg = SCRATCH[1];

/// The instructions that move `args` into R1–R5 before a call (for tests
/// of the parallel move).
#[cfg(test)]
pub(super) fn argument_moves(loc: &[Option<LocFinal>], args: &[Src]) -> Vec<Insn> {
    let mut em = Emitter::new(loc);
    em.call_args(args);
    em.insns
}

impl<'a> Emitter<'a> {
    fn new(loc: &'a [Option<LocFinal>]) -> Emitter<'a> {
        Emitter {
            loc,
            insns: Vec::new(),
            spans: Vec::new(),
            relocs: Vec::new(),
            func_refs: Vec::new(),
            span: Span::DUMMY,
            labels: Vec::new(),
            fixups: Vec::new(),
            last_bind: usize::MAX,
        }
    }
}

impl Emitter<'_> {
    pub(super) fn emit(&mut self, i: Insn) {
        self.insns.push(i);
        self.spans.push(self.span);
    }

    pub(super) fn loc(&self, v: VReg) -> LocFinal {
        // Every vreg that appears in a reachable op has a location; a vreg
        // with none is only possible for a def that was pruned, so R0 is as
        // good as anything (its value is never read).
        self.loc
            .get(v.0 as usize)
            .copied()
            .flatten()
            .unwrap_or(LocFinal::Reg(Reg::R0))
    }

    /// The register holding `v`, reloading a spilled `v` into `scratch`.
    pub(super) fn use_reg(&mut self, v: VReg, scratch: Reg) -> Reg {
        match self.loc(v) {
            LocFinal::Reg(r) => r,
            LocFinal::Stack(off) => {
                // `scratch` still holds the value if we just spilled it from
                // there and no jump lands in between.
                let just_stored = self.last_bind != self.insns.len()
                    && self.insns.last() == Some(&Insn::stx(Size::DW, Reg::R10, off, scratch));
                if !just_stored {
                    self.emit(Insn::ldx(Size::DW, scratch, Reg::R10, off));
                }
                scratch
            }
        }
    }

    /// The register to compute `v` into (`scratch` if `v` is spilled).
    pub(super) fn def_reg(&self, v: VReg, scratch: Reg) -> Reg {
        match self.loc(v) {
            LocFinal::Reg(r) => r,
            LocFinal::Stack(_) => scratch,
        }
    }

    /// Stores `reg` to `v`'s spill slot if `v` is spilled.
    pub(super) fn finish_def(&mut self, v: VReg, reg: Reg) {
        if let LocFinal::Stack(off) = self.loc(v) {
            self.emit(Insn::stx(Size::DW, Reg::R10, off, reg));
        }
    }

    pub(super) fn op(&mut self, op: &Op) {
        match op {
            Op::Entry { params } => self.entry(*params),
            Op::Mov {
                dst,
                src: Src::Reg(s),
                wide: true,
            } if matches!(self.loc(*dst), LocFinal::Stack(_))
                && matches!(self.loc(*s), LocFinal::Reg(_)) =>
            {
                let s = self.use_reg(*s, S1);
                self.finish_def(*dst, s);
            }
            Op::Mov { dst, src, wide } => {
                let d = self.def_reg(*dst, S1);
                match src {
                    Src::Reg(s) => {
                        let s = self.use_reg(*s, d);
                        if *wide {
                            if s != d {
                                self.emit(Insn::mov64_reg(d, s));
                            }
                        } else {
                            self.emit(Insn::mov32_reg(d, s));
                        }
                    }
                    Src::Imm(k) => {
                        if *wide {
                            self.emit(Insn::mov64_imm(d, *k));
                        } else {
                            self.emit(Insn::mov32_imm(d, *k));
                        }
                    }
                }
                self.finish_def(*dst, d);
            }
            Op::Imm64 { dst, value } => {
                let d = self.def_reg(*dst, S1);
                match i32::try_from(*value) {
                    Ok(k) => self.emit(Insn::mov64_imm(d, k)),
                    // `w = k` zero-extends: one slot for 0x8000_0000..=0xffff_ffff.
                    Err(_) if (0..=u32::MAX as i64).contains(value) => {
                        self.emit(Insn::mov32_imm(d, *value as u32 as i32))
                    }
                    Err(_) => {
                        for i in Insn::ld_imm64(d, *value) {
                            self.emit(i);
                        }
                    }
                }
                self.finish_def(*dst, d);
            }
            Op::Alu { op, dst, src, wide } => {
                let d = self.use_reg(*dst, S1);
                let code = op.code();
                match (src, wide) {
                    (Src::Reg(s), true) => {
                        let s = self.use_reg(*s, S2);
                        self.emit(Insn::alu64_reg(code, d, s));
                    }
                    (Src::Reg(s), false) => {
                        let s = self.use_reg(*s, S2);
                        self.emit(Insn::alu32_reg(code, d, s));
                    }
                    (Src::Imm(k), true) => self.emit(Insn::alu64_imm(code, d, *k)),
                    (Src::Imm(k), false) => self.emit(Insn::alu32_imm(code, d, *k)),
                }
                self.finish_def(*dst, d);
            }
            Op::Neg { dst } => {
                let d = self.use_reg(*dst, S1);
                self.emit(Insn::neg64(d));
                self.finish_def(*dst, d);
            }
            Op::Load { dst, base, off, w } => {
                let b = match base {
                    Base::Reg(b) => self.use_reg(*b, S1),
                    Base::Frame => Reg::R10,
                };
                let d = self.def_reg(*dst, S1);
                self.emit(Insn::ldx(w.size(), d, b, *off));
                self.finish_def(*dst, d);
            }
            Op::Store { base, off, src, w } => {
                let b = match base {
                    Base::Reg(b) => self.use_reg(*b, S1),
                    Base::Frame => Reg::R10,
                };
                match src {
                    Src::Reg(s) => {
                        let s = self.use_reg(*s, S2);
                        self.emit(Insn::stx(w.size(), b, *off, s));
                    }
                    Src::Imm(k) => self.emit(Insn::st(w.size(), b, *off, *k)),
                }
            }
            Op::StackAddr { dst, off } => {
                let d = self.def_reg(*dst, S1);
                self.emit(Insn::mov64_reg(d, Reg::R10));
                self.emit(Insn::alu64_imm(AluCode::Add, d, *off));
                self.finish_def(*dst, d);
            }
            Op::MapPtr { dst, symbol } => {
                let d = self.def_reg(*dst, S1);
                self.relocs.push(Reloc {
                    insn: self.insns.len(),
                    symbol: symbol.clone(),
                });
                for i in Insn::ld_map_fd(d, 0) {
                    self.emit(i);
                }
                self.finish_def(*dst, d);
            }
            Op::FuncAddr { dst, symbol } => {
                let d = self.def_reg(*dst, S1);
                self.func_refs.push(Reloc {
                    insn: self.insns.len(),
                    symbol: symbol.clone(),
                });
                for i in Insn::ld_func_addr(d, 0) {
                    self.emit(i);
                }
                self.finish_def(*dst, d);
            }
            Op::BtfVarAddr { dst, btf_id } => {
                let d = self.def_reg(*dst, S1);
                for i in Insn::ld_btf_id(d, *btf_id) {
                    self.emit(i);
                }
                self.finish_def(*dst, d);
            }
            Op::Call {
                helper,
                args,
                ret,
                kfunc,
            } => {
                self.call_args(args);
                self.emit(if *kfunc {
                    Insn::call_kfunc(helper.0)
                } else {
                    Insn::call(helper.0)
                });
                if let Some(r) = ret {
                    match self.loc(*r) {
                        LocFinal::Reg(Reg::R0) => {}
                        LocFinal::Reg(p) => self.emit(Insn::mov64_reg(p, Reg::R0)),
                        LocFinal::Stack(off) => {
                            self.emit(Insn::stx(Size::DW, Reg::R10, off, Reg::R0))
                        }
                    }
                }
            }
            Op::AtomicAdd { base, off, src, w } => {
                let b = self.use_reg(*base, S1);
                let s = self.use_reg(*src, S2);
                self.emit(Insn::atomic_add(w.size(), b, *off, s));
            }
            Op::AtomicFetch {
                base,
                off,
                val,
                w,
                add,
            } => {
                let b = self.use_reg(*base, S1);
                let v = self.use_reg(*val, S2);
                self.emit(if *add {
                    Insn::atomic_fetch_add(w.size(), b, *off, v)
                } else {
                    Insn::atomic_xchg(w.size(), b, *off, v)
                });
                self.finish_def(*val, v);
            }
            Op::Jmp { target } => {
                self.fixups.push((self.insns.len(), *target));
                self.emit(Insn::ja(0));
            }
            Op::Br { cond, a, b, target } => {
                let ra = self.use_reg(*a, S1);
                let insn = match b {
                    Src::Reg(b) => {
                        let rb = self.use_reg(*b, S2);
                        Insn::jmp_reg(cond.code(), ra, rb, 0)
                    }
                    Src::Imm(k) => Insn::jmp_imm(cond.code(), ra, *k, 0),
                };
                self.fixups.push((self.insns.len(), *target));
                self.emit(insn);
            }
            Op::Ret { value } => {
                match value {
                    Src::Reg(v) => match self.loc(*v) {
                        LocFinal::Reg(Reg::R0) => {}
                        LocFinal::Reg(r) => self.emit(Insn::mov64_reg(Reg::R0, r)),
                        LocFinal::Stack(off) => {
                            self.emit(Insn::ldx(Size::DW, Reg::R0, Reg::R10, off))
                        }
                    },
                    Src::Imm(k) => self.emit(Insn::mov64_imm(Reg::R0, *k)),
                }
                self.emit(Insn::exit());
            }
            Op::Bind(l) => {
                self.last_bind = self.insns.len();
                let at = l.0 as usize;
                if self.labels.len() <= at {
                    self.labels.resize(at + 1, usize::MAX);
                }
                self.labels[at] = self.insns.len();
            }
        }
    }

    /// Moves the parameters from R1..R(params) to where they live: spilled
    /// ones stored first (their registers are intact), then the register
    /// moves in parallel (cycles broken through a register no move touches).
    fn entry(&mut self, params: u32) {
        let mut moves: Vec<(Reg, Reg)> = Vec::new();
        for k in 0..params as usize {
            match self.loc.get(k).copied().flatten() {
                None => {}
                Some(LocFinal::Stack(off)) => {
                    self.emit(Insn::stx(Size::DW, Reg::R10, off, Reg::arg(k)))
                }
                Some(LocFinal::Reg(r)) if r == Reg::arg(k) => {}
                Some(LocFinal::Reg(r)) => moves.push((r, Reg::arg(k))),
            }
        }
        // At most five moves touch at most ten registers, and only moves
        // that form a cycle need the spare, so one is free when needed.
        let spare = Reg::ALL[..10]
            .iter()
            .copied()
            .find(|r| !moves.iter().any(|&(d, s)| d == *r || s == *r))
            .unwrap_or(Reg::R0);
        self.parallel_move(moves, spare);
    }

    /// Moves the arguments into R1..R5: register-to-register moves as a
    /// parallel move (cycles broken through R0, which no argument targets),
    /// then reloads of spilled arguments and immediates.
    pub(super) fn call_args(&mut self, args: &[Src]) {
        let mut moves: Vec<(Reg, Reg)> = Vec::new();
        for (k, a) in args.iter().enumerate() {
            if let Src::Reg(v) = a
                && let LocFinal::Reg(r) = self.loc(*v)
                && r != Reg::arg(k)
            {
                moves.push((Reg::arg(k), r));
            }
        }
        self.parallel_move(moves, Reg::R0);
        for (k, a) in args.iter().enumerate() {
            match a {
                Src::Reg(v) => {
                    if let LocFinal::Stack(off) = self.loc(*v) {
                        self.emit(Insn::ldx(Size::DW, Reg::arg(k), Reg::R10, off));
                    }
                }
                Src::Imm(x) => self.emit(Insn::mov64_imm(Reg::arg(k), *x)),
            }
        }
    }

    /// Performs `(destination, source)` register moves as if all at once;
    /// a cycle is broken by saving one destination in `spare`, which no
    /// move may read or write.
    fn parallel_move(&mut self, mut moves: Vec<(Reg, Reg)>, spare: Reg) {
        while !moves.is_empty() {
            let ready = (0..moves.len())
                .find(|&i| !moves.iter().any(|&(_, s)| s == moves[i].0))
                .map(|i| moves.remove(i));
            match ready {
                Some((d, s)) => self.emit(Insn::mov64_reg(d, s)),
                None => {
                    // Only cycles remain: save one destination in the spare.
                    let d = moves[0].0;
                    self.emit(Insn::mov64_reg(spare, d));
                    for m in &mut moves {
                        if m.1 == d {
                            m.1 = spare;
                        }
                    }
                }
            }
        }
    }

    pub(super) fn resolve(&mut self) -> Result<(), AsmError> {
        for &(at, l) in &self.fixups {
            let target = self.labels[l.0 as usize];
            let rel = target as i64 - (at as i64 + 1);
            let off = i16::try_from(rel).map_err(|_| AsmError::JumpTooFar {
                span: self.spans[at],
            })?;
            self.insns[at].off = off;
        }
        Ok(())
    }
}
