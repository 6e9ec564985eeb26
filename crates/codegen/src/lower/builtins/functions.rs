//! Built-in functions used as statements: output through the ring buffer,
//! map management, `exit()`.

use abi::{CounterIndex, EventKind};
use sema::CallTarget;
use sema::builtins::Function;
use syntax::ast::{Expr, ExprKind};

use super::super::{Lower, Place};
use crate::asm::{Cond, Helper, Src, VReg, Width};

impl Lower<'_> {
    pub(crate) fn call_statement(&mut self, e: &Expr, args: &[Expr]) {
        let Some(target) = self.probe.calls.get(&e.id).cloned() else {
            return;
        };
        match target {
            CallTarget::Printf(site) => self.printf(site, &args[1..]),
            CallTarget::Join(id) => self.join(id, &args[0]),
            CallTarget::Emit => self.emit_stream_record(),
            CallTarget::Time(id) => self.emit_event(EventKind::Time, id as u32, |_, _| {}, 8),
            CallTarget::Function(Function::Exit) => {
                self.emit_event(EventKind::Exit, 0, |_, _| {}, 8);
                let exit = self.exit;
                self.asm.jmp(exit);
            }
            CallTarget::Function(Function::Delete) => match args {
                [
                    m @ Expr {
                        kind: ExprKind::Map { keys, .. },
                        ..
                    },
                ] => self.map_delete(m, keys),
                [m, key] => self.map_delete(m, std::slice::from_ref(key)),
                _ => {}
            },
            CallTarget::Function(Function::Clear) => {
                let id = self.map_index(&args[0]) as u32;
                self.emit_event(EventKind::Clear, id, |_, _| {}, 8);
            }
            CallTarget::Function(Function::Zero) => {
                let id = self.map_index(&args[0]) as u32;
                self.emit_event(EventKind::Zero, id, |_, _| {}, 8);
            }
            CallTarget::Function(Function::PrintMap) => {
                let id = self.map_index(&args[0]) as u32;
                let top = args.get(1).map(|a| self.scalar(a));
                let div = args.get(2).map(|a| self.scalar(a));
                self.emit_event(
                    EventKind::Print,
                    id,
                    |l, rec| {
                        let src = |r: Option<VReg>| r.map_or(Src::Imm(0), Src::Reg);
                        l.asm.store(rec, 8, src(top), Width::DW);
                        l.asm.store(rec, 16, src(div), Width::DW);
                    },
                    24,
                );
            }
            CallTarget::Function(
                Function::Str
                | Function::Ntop
                | Function::Aggregate(_)
                | Function::Stack { .. }
                | Function::Sym { .. }
                | Function::Uaddr { .. }
                | Function::Bswap { .. }
                | Function::Reg { .. }
                | Function::Strftime { .. }
                | Function::Buf,
            ) => {}
        }
    }

    /// Reserves a record in the ring buffer, writes its header and body, submits it.
    /// A full buffer is counted, never silent.
    fn emit_event(
        &mut self,
        kind: EventKind,
        id: u32,
        body: impl FnOnce(&mut Self, VReg),
        size: u32,
    ) {
        let map = self.asm.vreg();
        self.asm.map_ptr(map, abi::EVENTS_MAP);
        let rec = self.asm.vreg();
        self.asm.call(
            Helper::RINGBUF_RESERVE,
            &[Src::Reg(map), Src::Imm(size as i32), Src::Imm(0)],
            Some(rec),
        );
        let (ok, done) = (self.asm.label(), self.asm.label());
        self.asm.br(Cond::Ne, rec, Src::Imm(0), ok);
        self.count_loss(CounterIndex::RingbufFull);
        self.asm.jmp(done);
        self.asm.bind(ok);
        self.asm.store(rec, 0, Src::Imm(kind as i32), Width::W);
        self.asm.store(rec, 4, Src::Imm(id as i32), Width::W);
        body(self, rec);
        self.asm
            .call(Helper::RINGBUF_SUBMIT, &[Src::Reg(rec), Src::Imm(0)], None);
        self.asm.bind(done);
    }

    fn printf(&mut self, site: usize, args: &[Expr]) {
        let spec = self.printfs[site].clone();
        let types = self.typed.printfs[site].args.clone();
        // Scalars first, so no helper call runs while the record is reserved
        // except those that write straight into it (strings).
        let mut scalars = Vec::new();
        for (arg, t) in args.iter().zip(&types) {
            scalars.push(if t.is_scalar() {
                Some(self.scalar(arg))
            } else {
                None
            });
        }
        self.emit_event(
            EventKind::Printf,
            site as u32,
            |l, rec| {
                // User space reads each string up to its NUL: no padding needed.
                l.canonical = false;
                for (((arg, t), field), scalar) in
                    args.iter().zip(&types).zip(&spec.args).zip(scalars)
                {
                    let place = Place::Ptr(rec, field.field.offset as i16);
                    match scalar {
                        Some(v) => l.store(place, Src::Reg(v), Width::DW),
                        None => l.write_into(arg, place, t),
                    }
                }
                l.canonical = true;
            },
            spec.size,
        );
    }

    /// `join(argv)`: up to JOIN_MAX_ARGS strings read through an array of
    /// pointers that ends with NULL, with their count.
    fn join(&mut self, site: usize, array: &Expr) {
        let base = self.scalar(array);
        let size = abi::JOIN_ARGS_OFFSET + abi::JOIN_MAX_ARGS * abi::JOIN_ARG_SIZE;
        self.emit_event(
            EventKind::Join,
            site as u32,
            |l, rec| {
                let ptr_slot = l.asm.stack(8);
                let done = l.asm.label();
                l.asm.store(rec, 8, Src::Imm(0), Width::DW);
                for i in 0..abi::JOIN_MAX_ARGS {
                    let src = l.asm.vreg();
                    l.asm.mov(src, Src::Reg(base));
                    l.asm
                        .alu(crate::asm::AluOp::Add, src, Src::Imm(8 * i as i32));
                    let dst = l.asm.vreg();
                    l.asm.stack_addr(dst, ptr_slot, 0);
                    l.asm.call(
                        Helper::PROBE_READ,
                        &[Src::Reg(dst), Src::Imm(8), Src::Reg(src)],
                        None,
                    );
                    let p = l.asm.vreg();
                    l.asm.load_stack(p, ptr_slot, 0, Width::DW);
                    l.asm.br(Cond::Eq, p, Src::Imm(0), done);
                    let out = l.asm.vreg();
                    l.asm.mov(out, Src::Reg(rec));
                    l.asm.alu(
                        crate::asm::AluOp::Add,
                        out,
                        Src::Imm((abi::JOIN_ARGS_OFFSET + i * abi::JOIN_ARG_SIZE) as i32),
                    );
                    l.asm.call(
                        Helper::PROBE_READ_STR,
                        &[
                            Src::Reg(out),
                            Src::Imm(abi::JOIN_ARG_SIZE as i32),
                            Src::Reg(p),
                        ],
                        None,
                    );
                    l.asm.store(rec, 8, Src::Imm(i as i32 + 1), Width::DW);
                }
                l.asm.bind(done);
            },
            size,
        );
    }
}
