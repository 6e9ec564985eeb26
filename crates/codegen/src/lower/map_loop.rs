//! `for ($kv : @map) { ... }`: the body becomes a callback subprogram that
//! the kernel's `bpf_for_each_map_elem` calls once per element (Linux 5.13).
//!
//! The callback is a function of its own (its own frame, registers and
//! labels: everything [`FunctionState`] holds), so the caller's variables
//! reach it through a context on the caller's stack, passed by pointer:
//! - word 0: set when the body leaves the probe, so the caller leaves too
//!   once the helper returns: 1 for `return` and `exit()`, 2 for
//!   `return VALUE`, whose value is word 2;
//! - word 1: the program's context pointer (`args`, stacks, registers);
//! - then every pointer a variable lives behind (a stream instance's
//!   record, an outer callback's context).
//!
//! Variables in the caller's frame are addressed from the context's own
//! address (they are in the same frame, at fixed distances from it), so the
//! body reads and updates them in place: nothing is copied in or out. The
//! callback returns 0 to go on to the next element and 1 to stop (`break`,
//! or leaving the probe); `continue` returns 0.

use std::collections::HashMap;

use sema::Type;
use syntax::ast::{Block, Expr, NodeId};

use super::expr::field_offsets;
use super::{CtxAt, LoopLabels, Lower, Place};
use crate::asm::{Asm, Cond, Helper, Label, Slot, Src, VReg, Width};

/// The callback's parameters (`long cb(map, key, value, ctx)`).
pub(crate) const CALLBACK_PARAMS: u32 = 4;
const KEY_PARAM: u32 = 1;
const VALUE_PARAM: u32 = 2;
const CONTEXT_PARAM: u32 = 3;
/// Word offsets in the loop context.
const STOP_WORD: i16 = 0;
const PROGRAM_CTX_WORD: i16 = 8;
const RETURN_VALUE_WORD: i16 = 16;
const CARRIED_WORDS: i16 = 24;
/// What the stop word says.
const LEFT: i32 = 1;
const RETURNED_VALUE: i32 = 2;

/// What lowering keeps per function (the program, or a callback in it);
/// lowering a callback's body swaps all of it out and back.
pub(crate) struct FunctionState {
    asm: Asm,
    vars: HashMap<String, Place>,
    loops: Vec<LoopLabels>,
    range_iters: Vec<Slot>,
    exit: Label,
    ctx: CtxAt,
    stream_record: Option<(VReg, abi::StreamSpec)>,
    /// In a callback: its loop context (parameter 4).
    loop_context: Option<VReg>,
    /// The scratch buffer as this function looked it up.
    scratch_base: VReg,
}

impl Lower<'_> {
    fn swap_function(&mut self, state: FunctionState) -> FunctionState {
        FunctionState {
            asm: std::mem::replace(&mut self.asm, state.asm),
            vars: std::mem::replace(&mut self.vars, state.vars),
            loops: std::mem::replace(&mut self.loops, state.loops),
            range_iters: std::mem::replace(&mut self.range_iters, state.range_iters),
            exit: std::mem::replace(&mut self.exit, state.exit),
            ctx: std::mem::replace(&mut self.ctx, state.ctx),
            stream_record: std::mem::replace(&mut self.stream_record, state.stream_record),
            loop_context: std::mem::replace(&mut self.loop_context, state.loop_context),
            scratch_base: std::mem::replace(&mut self.scratch_base, state.scratch_base),
        }
    }

    /// `for ($var : @map) body`.
    pub(crate) fn for_map(&mut self, id: NodeId, var: &str, map: &Expr, body: &Block) {
        let Some(element) = self.var_place(id, var) else {
            return;
        };
        let element_type = self
            .probe
            .vars
            .get(self.probe.var_key(id, var))
            .cloned()
            .unwrap_or(Type::I64);
        let Type::Tuple(parts) = &element_type else {
            return;
        };
        let (key_size, value_size) = (parts[0].layout().size(), parts[1].layout().size());
        let value_offset = field_offsets(&element_type.layout())
            .get(1)
            .copied()
            .unwrap_or(0);
        let index = self.map_index(map);
        let map_symbol = self.maps[index].bpf_name.clone();
        // An aggregation's value is per CPU: the callback merges the CPUs'.
        let merged = match &self.typed.maps[index].value {
            Type::Agg(agg) => Some((index, agg.clone())),
            _ => None,
        };

        // The pointers variables live behind, each carried in a word.
        let mut carried: Vec<VReg> = Vec::new();
        let behind = self.vars.values().filter_map(|p| match p {
            Place::Ptr(v, _) => Some(*v),
            Place::Stack(..) => None,
        });
        for v in behind.chain(self.stream_record.as_ref().map(|(v, _)| *v)) {
            if !carried.contains(&v) {
                carried.push(v);
            }
        }
        let context = self
            .asm
            .stack(CARRIED_WORDS as u32 + 8 * carried.len() as u32);
        self.asm
            .store_stack(context, STOP_WORD, Src::Imm(0), Width::DW);
        let program_ctx = self.ctx();
        self.asm
            .store_stack(context, PROGRAM_CTX_WORD, Src::Reg(program_ctx), Width::DW);
        for (i, v) in carried.iter().enumerate() {
            self.asm.store_stack(
                context,
                CARRIED_WORDS + 8 * i as i16,
                Src::Reg(*v),
                Width::DW,
            );
        }

        // Numbered before the body, so nested loops number after theirs.
        self.map_loops += 1;
        let name = format!("{}_for{}", self.program_name, self.map_loops);
        let copy = ElementCopy {
            element,
            key_size,
            value_size,
            value_offset,
            merged,
        };
        let func = self.callback(context, &carried, &copy, body);
        self.subprograms.push((name.clone(), func));

        let m = self.asm.vreg();
        self.asm.map_ptr(m, &map_symbol);
        let callback = self.asm.vreg();
        self.asm.func_addr(callback, &name);
        let context_ptr = self.asm.vreg();
        self.asm.stack_addr(context_ptr, context, 0);
        self.asm.call(
            Helper::FOR_EACH_MAP_ELEM,
            &[
                Src::Reg(m),
                Src::Reg(callback),
                Src::Reg(context_ptr),
                Src::Imm(0),
            ],
            None,
        );
        let stop = self.asm.vreg();
        self.asm.load_stack(stop, context, STOP_WORD, Width::DW);
        let (go_on, no_value) = (self.asm.label(), self.asm.label());
        self.asm.br(Cond::Eq, stop, Src::Imm(0), go_on);
        self.asm
            .br(Cond::Ne, stop, Src::Imm(RETURNED_VALUE), no_value);
        let value = self.asm.vreg();
        self.asm
            .load_stack(value, context, RETURN_VALUE_WORD, Width::DW);
        self.return_value(value);
        self.asm.bind(no_value);
        self.return_now();
        self.asm.bind(go_on);
    }

    /// `return VALUE` in a callback: the value and the stop word for the
    /// caller, which returns it in turn; 1 stops the loop. `false` outside
    /// a callback.
    pub(crate) fn return_value_from_callback(&mut self, value: VReg) -> bool {
        let Some(context) = self.loop_context else {
            return false;
        };
        self.asm
            .store(context, RETURN_VALUE_WORD, Src::Reg(value), Width::DW);
        self.asm
            .store(context, STOP_WORD, Src::Imm(RETURNED_VALUE), Width::DW);
        self.asm.ret(Src::Imm(1));
        true
    }

    /// Lowers the body as the callback: its own function, whose variables
    /// are the caller's, reached through the context (parameter 4).
    fn callback(
        &mut self,
        context: Slot,
        carried: &[VReg],
        copy: &ElementCopy,
        body: &Block,
    ) -> Asm {
        let mut asm = Asm::with_params(CALLBACK_PARAMS);
        asm.set_span(self.asm.span());
        // The callback's large values go in the program's scratch buffer,
        // after those the caller holds now.
        let scratch_from = self.asm.scratch_mark();
        asm.start_scratch_at(scratch_from);
        let scratch_base = asm.vreg();
        let anchor = asm.param(CONTEXT_PARAM);
        let (key, value) = (asm.param(KEY_PARAM), asm.param(VALUE_PARAM));
        let (next, stop, exit) = (asm.label(), asm.label(), asm.label());
        // Each carried pointer, loaded again in the callback.
        let mut reloaded: HashMap<u32, VReg> = HashMap::new();
        for (i, v) in carried.iter().enumerate() {
            let r = asm.vreg();
            asm.load(r, anchor, CARRIED_WORDS + 8 * i as i16, Width::DW);
            reloaded.insert(v.0, r);
        }
        let from_context = |slot: Slot, off: i32| {
            let at = slot.offset() + off - context.offset();
            Place::Ptr(anchor, at)
        };
        let vars = self
            .vars
            .iter()
            .map(|(name, p)| {
                let p = match *p {
                    Place::Stack(slot, off) => from_context(slot, off),
                    Place::Ptr(v, off) => Place::Ptr(reloaded[&v.0], off),
                };
                (name.clone(), p)
            })
            .collect();
        let element = match copy.element {
            Place::Stack(slot, off) => from_context(slot, off),
            Place::Ptr(v, off) => Place::Ptr(reloaded[&v.0], off),
        };
        let stream_record = self
            .stream_record
            .clone()
            .map(|(v, spec)| (reloaded[&v.0], spec));
        let outer = self.swap_function(FunctionState {
            asm,
            vars,
            loops: vec![LoopLabels {
                brk: stop,
                cont: next,
            }],
            range_iters: Vec::new(),
            exit,
            ctx: CtxAt::Saved(anchor, PROGRAM_CTX_WORD),
            stream_record,
            loop_context: Some(anchor),
            scratch_base,
        });

        // `$kv = (key, value)`, copied from the element.
        self.copy(element, Place::Ptr(key, 0), copy.key_size);
        match &copy.merged {
            Some((index, agg)) => {
                let v = self.aggregation_read(*index, Place::Ptr(key, 0), agg);
                self.store(element.offset(copy.value_offset), Src::Reg(v), Width::DW);
            }
            None => self.copy(
                element.offset(copy.value_offset),
                Place::Ptr(value, 0),
                copy.value_size,
            ),
        }
        self.block(body);
        self.asm.bind(next);
        self.asm.ret(Src::Imm(0));
        self.asm.bind(exit);
        self.asm.store(anchor, STOP_WORD, Src::Imm(LEFT), Width::DW);
        self.asm.bind(stop);
        self.asm.ret(Src::Imm(1));

        // A value too long for the stack lives in the program's scratch
        // buffer: the callback looks it up for itself (a pointer in the
        // context would be one more word for every loop), and the caller's
        // program needs the buffer as large as the callback goes.
        let scratch = self.asm.scratch_size();
        if scratch > scratch_from {
            self.look_up_scratch_first();
        }
        let inner = self.swap_function(outer);
        self.asm.need_scratch(scratch);
        inner.asm
    }
}

/// Where the loop variable is and how the element fills it.
struct ElementCopy {
    element: Place,
    key_size: u32,
    value_size: u32,
    value_offset: u32,
    /// A map of aggregations (its index and kind): the value is the CPUs'
    /// merged, as reading the element in a probe merges them.
    merged: Option<(usize, abi::Aggregation)>,
}
