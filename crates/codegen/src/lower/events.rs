//! Ring-buffer records from the kernel side: every builtin that sends
//! something to user space (printf, time, join, exit, print, clear, zero)
//! and every stream record goes through [`Lower::emit_event`].

use abi::{CounterIndex, EventKind};

use super::Lower;
use crate::asm::{Cond, Helper, Src, VReg, Width};

impl Lower<'_> {
    /// Reserves a record in the ring buffer, writes its header and body, submits it.
    /// A full buffer is counted, never silent.
    pub(crate) fn emit_event(
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
}
