//! A typed BPF assembler over virtual registers.
//!
//! The lowering emits instructions on [`VReg`]s with forward and backward
//! jumps to [`Label`]s; [`Asm::finish`] drops unreachable code, computes
//! liveness, assigns physical registers (spilling to 8-byte stack slots when
//! they run out), and resolves labels into a [`Function`].
//!
//! Register allocation is linear scan over live intervals:
//! - liveness is a backward data-flow over the instruction graph, so a value
//!   live around a loop's back edge is live through the whole loop;
//! - each instruction `i` has a use point `2i` and a def point `2i + 1`; a
//!   vreg's interval is the hull of its points;
//! - a vreg live across a `call` may only use R6–R9 (or is spilled), others
//!   may also use R0–R5;
//! - when no register is free, the interval ending last is spilled whole;
//!   if anything spilled, allocation is redone with R0 and R5 kept as
//!   scratch registers to reload spilled operands.

//!
//! The pieces, one file each: the instruction model ([`model`]: operands,
//! ops, the assembled [`Function`]), liveness and pruning (`liveness`),
//! register allocation (`alloc`) and emission of raw instructions
//! (`emit`); this file is the builder the lowering calls.

mod alloc;
mod emit;
mod liveness;
mod model;

use source::Span;

use alloc::{SCRATCH, allocate};
use liveness::{Liveness, check_and_prune};
pub use model::{
    AluOp, AsmError, Cond, Function, Helper, Label, MAX_SCRATCH, MAX_STACK, Reloc, Slot, Src, VReg,
    Width,
};

/// Where the frame and the scratch buffer end at one point of the lowering
/// ([`Asm::stack_mark`]), to give back what is reserved after it.
#[derive(Clone, Copy, Debug)]
pub struct FrameMark {
    frame: u32,
    scratch: u32,
}
use model::{Base, Op};

/// The assembler.
pub struct Asm {
    ops: Vec<Op>,
    spans: Vec<Span>,
    span: Span,
    next_vreg: u32,
    next_label: u32,
    /// The frame reserved now; [`Asm::stack_release`] gives back a statement's slots.
    frame: u32,
    /// The most frame ever reserved at once: what the function needs.
    frame_peak: u32,
    /// The scratch memory reserved now (values too large for the frame,
    /// kept in the program's per-CPU scratch buffer; see [`Asm::scratch`]).
    scratch: u32,
    /// The most scratch memory ever reserved at once.
    scratch_peak: u32,
    error: Option<AsmError>,
}

impl Default for Asm {
    fn default() -> Asm {
        Asm::new()
    }
}

/// The context pointer's vreg (R1 at entry).
pub(crate) const CTX: VReg = VReg(0);

impl Asm {
    /// A program's assembler: one parameter, the context pointer.
    pub fn new() -> Asm {
        Asm::with_params(1)
    }

    /// A function of `params` parameters (1 to 5), arriving in R1..R5:
    /// [`Asm::param`] names them (a subprogram, such as a callback).
    pub fn with_params(params: u32) -> Asm {
        let params = params.clamp(1, 5);
        // Room for a typical probe body, so that it is not regrown op by op.
        let mut ops = Vec::with_capacity(64);
        ops.push(Op::Entry { params });
        let mut spans = Vec::with_capacity(64);
        spans.push(Span::DUMMY);
        Asm {
            ops,
            spans,
            span: Span::DUMMY,
            next_vreg: params,
            next_label: 0,
            frame: 0,
            frame_peak: 0,
            scratch: 0,
            scratch_peak: 0,
            error: None,
        }
    }

    /// The context pointer (R1 at entry), an ordinary vreg.
    pub fn ctx(&self) -> VReg {
        CTX
    }

    /// Parameter `k` (0-based; R(k+1) at entry; parameter 0 is [`Asm::ctx`]).
    pub fn param(&self, k: u32) -> VReg {
        VReg(k)
    }

    pub fn vreg(&mut self) -> VReg {
        let v = VReg(self.next_vreg);
        self.next_vreg += 1;
        v
    }

    /// The span recorded on every following instruction.
    pub fn set_span(&mut self, span: Span) {
        self.span = span;
    }

    pub fn span(&self) -> Span {
        self.span
    }

    /// Reserves `size` bytes of frame (rounded up to 8, 8-aligned).
    pub fn stack(&mut self, size: u32) -> Slot {
        let reserve = size.max(1).next_multiple_of(8);
        self.frame = self.frame.saturating_add(reserve);
        self.frame_peak = self.frame_peak.max(self.frame);
        if self.frame > MAX_STACK {
            self.fail(AsmError::StackTooLarge {
                span: self.span,
                needed: self.frame,
            });
        }
        Slot {
            off: -(self.frame.min(1 << 20) as i32),
            size,
        }
    }

    /// Bytes of frame the function needs (the most reserved at once).
    pub fn frame_size(&self) -> u32 {
        self.frame_peak
    }

    /// Where the frame and the scratch buffer end now, to give back what is
    /// reserved after them.
    pub fn stack_mark(&self) -> FrameMark {
        FrameMark {
            frame: self.frame,
            scratch: self.scratch,
        }
    }

    /// Gives back every slot (frame or scratch) reserved since `mark`: the
    /// caller promises that nothing reads them any more (a statement's
    /// temporaries, once it is done).
    pub fn stack_release(&mut self, mark: FrameMark) {
        self.frame = self.frame.min(mark.frame);
        self.scratch = self.scratch.min(mark.scratch);
    }

    /// Reserves `size` bytes (rounded up to 8, 8-aligned) of the program's
    /// scratch buffer, for a value too large for the frame, and gives their
    /// offset in it. The buffer is a per-CPU map value the lowering looks up
    /// once per run; it holds at most [`MAX_SCRATCH`] bytes.
    pub fn scratch(&mut self, size: u32) -> u32 {
        let at = self.scratch;
        self.scratch = self.scratch.saturating_add(size.max(1).next_multiple_of(8));
        self.scratch_peak = self.scratch_peak.max(self.scratch);
        if self.scratch > MAX_SCRATCH {
            self.fail(AsmError::ScratchTooLarge {
                span: self.span,
                needed: self.scratch,
            });
        }
        at.min(MAX_SCRATCH)
    }

    /// Bytes of scratch buffer the function needs (the most reserved at once).
    pub fn scratch_size(&self) -> u32 {
        self.scratch_peak
    }

    /// Where the next scratch reservation would start.
    pub fn scratch_mark(&self) -> u32 {
        self.scratch
    }

    /// Starts this function's scratch reservations at `from`: a callback's
    /// values go after those its caller holds while it runs.
    pub fn start_scratch_at(&mut self, from: u32) {
        self.scratch = from;
        self.scratch_peak = from;
    }

    /// The function needs `peak` bytes of scratch buffer (a callback it
    /// calls uses the same buffer up to there).
    pub fn need_scratch(&mut self, peak: u32) {
        self.scratch_peak = self.scratch_peak.max(peak);
    }

    /// `off` as an instruction's 16-bit offset; an offset beyond it fails
    /// the function (a value too large to address).
    pub fn offset16(&mut self, off: i32) -> i16 {
        i16::try_from(off).unwrap_or_else(|_| {
            self.fail(AsmError::OffsetOutOfRange {
                span: self.span,
                offset: i64::from(off),
            });
            0
        })
    }

    /// How many instructions are emitted so far (see [`Asm::move_to_start`]).
    pub fn position(&self) -> usize {
        self.ops.len()
    }

    /// Moves the instructions emitted since `position` to the start of the
    /// function: a prologue that only the finished body shows a need for
    /// (the scratch buffer's lookup). They must not bind labels used before.
    pub fn move_to_start(&mut self, position: usize) {
        let ops: Vec<Op> = self.ops.drain(position..).collect();
        let spans: Vec<Span> = self.spans.drain(position..).collect();
        // After `Entry`, which stays first.
        self.ops.splice(1..1, ops);
        self.spans.splice(1..1, spans);
    }

    /// Records the first error; [`Asm::finish`] returns it.
    pub(crate) fn fail(&mut self, e: AsmError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    fn push(&mut self, op: Op) {
        self.ops.push(op);
        self.spans.push(self.span);
    }

    /// `dst = src` (64-bit).
    pub fn mov(&mut self, dst: VReg, src: Src) {
        self.push(Op::Mov {
            dst,
            src,
            wide: true,
        });
    }

    /// `dst = (u32)src`, zero-extended.
    pub fn mov32(&mut self, dst: VReg, src: Src) {
        self.push(Op::Mov {
            dst,
            src,
            wide: false,
        });
    }

    /// `dst = value` (one `mov` when it fits a sign-extended i32 or a
    /// zero-extended u32, else `ld_imm64`).
    pub fn imm64(&mut self, dst: VReg, value: i64) {
        self.push(Op::Imm64 { dst, value });
    }

    /// `dst (op)= src` on 64 bits.
    pub fn alu(&mut self, op: AluOp, dst: VReg, src: Src) {
        self.push(Op::Alu {
            op,
            dst,
            src,
            wide: true,
        });
    }

    /// `dst = (u32)dst (op) (u32)src`, zero-extended.
    pub fn alu32(&mut self, op: AluOp, dst: VReg, src: Src) {
        self.push(Op::Alu {
            op,
            dst,
            src,
            wide: false,
        });
    }

    /// `dst = -dst` (64-bit).
    pub fn neg(&mut self, dst: VReg) {
        self.push(Op::Neg { dst });
    }

    /// `dst = *(w *)(base + off)`, zero-extended.
    pub fn load(&mut self, dst: VReg, base: VReg, off: i16, w: Width) {
        self.push(Op::Load {
            dst,
            base: Base::Reg(base),
            off,
            w,
        });
    }

    /// `*(w *)(base + off) = src` (an immediate uses the ST form, sign-extended for DW).
    pub fn store(&mut self, base: VReg, off: i16, src: Src, w: Width) {
        self.push(Op::Store {
            base: Base::Reg(base),
            off,
            src,
            w,
        });
    }

    fn frame_off(&mut self, slot: Slot, off: i16) -> i16 {
        let total = slot.off as i64 + off as i64;
        match i16::try_from(total) {
            Ok(o) => o,
            Err(_) => {
                self.fail(AsmError::OffsetOutOfRange {
                    span: self.span,
                    offset: total,
                });
                0
            }
        }
    }

    /// `dst = *(w *)(r10 + slot + off)`.
    pub fn load_stack(&mut self, dst: VReg, slot: Slot, off: i16, w: Width) {
        let off = self.frame_off(slot, off);
        self.push(Op::Load {
            dst,
            base: Base::Frame,
            off,
            w,
        });
    }

    /// `*(w *)(r10 + slot + off) = src`.
    pub fn store_stack(&mut self, slot: Slot, off: i16, src: Src, w: Width) {
        let off = self.frame_off(slot, off);
        self.push(Op::Store {
            base: Base::Frame,
            off,
            src,
            w,
        });
    }

    /// `dst = r10 + slot + off`.
    pub fn stack_addr(&mut self, dst: VReg, slot: Slot, off: i16) {
        let off = slot.off + off as i32;
        self.push(Op::StackAddr { dst, off });
    }

    /// `dst = &map` (an `ld_imm64` with a relocation against `map_symbol`).
    pub fn map_ptr(&mut self, dst: VReg, map_symbol: &str) {
        self.push(Op::MapPtr {
            dst,
            symbol: map_symbol.to_string(),
        });
    }

    /// `dst = &subprogram` (a `BPF_PSEUDO_FUNC` `ld_imm64` relocated against
    /// `symbol`): a callback to pass to a helper.
    pub fn func_addr(&mut self, dst: VReg, symbol: &str) {
        self.push(Op::FuncAddr {
            dst,
            symbol: symbol.to_string(),
        });
    }

    /// `dst = &kernel variable` whose vmlinux BTF id is `btf_id` (a
    /// `BPF_PSEUDO_BTF_ID` `ld_imm64`).
    pub fn btf_var_addr(&mut self, dst: VReg, btf_id: u32) {
        self.push(Op::BtfVarAddr { dst, btf_id });
    }

    /// Calls `helper` with `args` in R1..R5; its R0 goes to `ret`.
    pub fn call(&mut self, helper: Helper, args: &[Src], ret: Option<VReg>) {
        self.call_any(helper, args, ret, false);
    }

    /// A call of the kernel function (kfunc) whose vmlinux BTF id is `btf_id`.
    pub fn call_kfunc(&mut self, btf_id: u32, args: &[Src], ret: Option<VReg>) {
        self.call_any(Helper(btf_id), args, ret, true);
    }

    fn call_any(&mut self, helper: Helper, args: &[Src], ret: Option<VReg>, kfunc: bool) {
        if args.len() > 5 {
            self.fail(AsmError::TooManyArgs {
                span: self.span,
                count: args.len(),
            });
        }
        self.push(Op::Call {
            helper,
            args: model::CallArgs::new(args),
            ret,
            kfunc,
        });
    }

    /// `lock *(w *)(base + off) += src` (W or DW).
    pub fn atomic_add(&mut self, base: VReg, off: i16, src: VReg, w: Width) {
        if !matches!(w, Width::W | Width::DW) {
            self.fail(AsmError::BadAtomicWidth { span: self.span });
        }
        self.push(Op::AtomicAdd { base, off, src, w });
    }

    /// `val = xchg(*(w *)(base + off), val)` (W or DW): stores `val` and
    /// gives back what was there, in one atomic step.
    pub fn atomic_xchg(&mut self, base: VReg, off: i16, val: VReg, w: Width) {
        if !matches!(w, Width::W | Width::DW) {
            self.fail(AsmError::BadAtomicWidth { span: self.span });
        }
        self.push(Op::AtomicFetch {
            base,
            off,
            val,
            w,
            add: false,
        });
    }

    /// `val = fetch_add(*(w *)(base + off), val)` (W or DW): adds `val`
    /// and gives back the value before the add, in one atomic step.
    pub fn atomic_fetch_add(&mut self, base: VReg, off: i16, val: VReg, w: Width) {
        if !matches!(w, Width::W | Width::DW) {
            self.fail(AsmError::BadAtomicWidth { span: self.span });
        }
        self.push(Op::AtomicFetch {
            base,
            off,
            val,
            w,
            add: true,
        });
    }

    pub fn label(&mut self) -> Label {
        let l = Label(self.next_label);
        self.next_label += 1;
        l
    }

    /// Places `l` at the next instruction.
    pub fn bind(&mut self, l: Label) {
        self.push(Op::Bind(l));
    }

    pub fn jmp(&mut self, l: Label) {
        self.push(Op::Jmp { target: l });
    }

    /// `if a (c) b goto l` (64-bit compare).
    pub fn br(&mut self, c: Cond, a: VReg, b: Src, l: Label) {
        self.push(Op::Br {
            cond: c,
            a,
            b,
            target: l,
        });
    }

    /// `r0 = value; exit`.
    pub fn ret(&mut self, value: Src) {
        self.push(Op::Ret { value });
    }

    /// Allocates registers and resolves labels.
    pub fn finish(self) -> Result<Function, AsmError> {
        self.finish_keeping().0
    }

    /// [`Asm::finish`], handing back the ops it finished from instead of
    /// freeing them: a worker thread that finishes what another thread
    /// lowered gives them back to be freed where they were allocated
    /// (frees across threads contend for the allocator's lock).
    pub fn finish_keeping(self) -> (Result<Function, AsmError>, Leftovers) {
        let Asm {
            ops,
            spans,
            frame_peak: frame,
            next_vreg,
            next_label,
            error,
            ..
        } = self;
        if let Some(e) = error {
            return (
                Err(e),
                Leftovers {
                    _ops: ops,
                    _spans: spans,
                },
            );
        }
        match check_and_prune(ops, spans, next_label) {
            Ok((ops, spans)) => {
                let function = allocate_and_emit(&ops, &spans, frame, next_vreg, next_label);
                (
                    function,
                    Leftovers {
                        _ops: ops,
                        _spans: spans,
                    },
                )
            }
            Err(e) => (Err(e), Leftovers::default()),
        }
    }
}

/// What [`Asm::finish_keeping`] hands back: held only to be dropped.
#[derive(Default)]
pub struct Leftovers {
    _ops: Vec<Op>,
    _spans: Vec<Span>,
}

/// Register allocation and emission of pruned `ops` (see [`Asm::finish`]).
fn allocate_and_emit(
    ops: &[Op],
    spans: &[Span],
    frame: u32,
    next_vreg: u32,
    next_label: u32,
) -> Result<Function, AsmError> {
    // Every vreg comes from `vreg()` or is a parameter; counting the ones
    // the ops name as well keeps a stray number from indexing out of bounds.
    let mut named = Vec::new();
    let mut nvregs = next_vreg.max(1);
    for op in ops {
        named.clear();
        op.uses(&mut named);
        let top_use = named.iter().map(|v| v.0 + 1).max().unwrap_or(0);
        nvregs = nvregs.max(top_use).max(op.defs().end);
    }
    let nvregs = nvregs as usize;
    let live = Liveness::compute(ops, nvregs, next_label);
    let mut alloc = allocate(ops, &live, nvregs, &[]);
    if !alloc.spilled.is_empty() {
        alloc = allocate(ops, &live, nvregs, &SCRATCH);
    }
    let (loc, spill_bytes) = alloc.assign_slots(frame);
    let frame_size = frame + spill_bytes;
    if frame_size > MAX_STACK {
        let span = alloc
            .spilled
            .iter()
            .map(|s| s.0)
            .min()
            .map(|p| spans[p / 2])
            .unwrap_or(Span::DUMMY);
        return Err(AsmError::StackTooLarge {
            span,
            needed: frame_size,
        });
    }
    emit::emit(ops, spans, &loc, frame_size)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
