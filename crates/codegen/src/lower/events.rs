//! Ring-buffer records from the kernel side: every builtin that sends
//! something to user space (printf, time, join, exit, print, clear, zero)
//! and every stream record goes through [`Lower::emit_event`].

use abi::{CounterIndex, EventKind};

use super::Lower;
use crate::asm::{Cond, Helper, Src, VReg, Width};

impl Lower<'_> {
    /// Calls `helper` and gives its result. With `-k` (`-kk` for the memory
    /// reads, `read`), a failure (a negative result) also sends a
    /// [`EventKind::HelperError`] record naming this call site, which user
    /// space reports with the script line.
    pub(crate) fn checked_call(&mut self, helper: Helper, args: &[Src], read: bool) -> VReg {
        let ret = self.asm.vreg();
        self.asm.call(helper, args, Some(ret));
        let wanted = if read {
            abi::HelperErrors::WithReads
        } else {
            abi::HelperErrors::Helpers
        };
        if self.helper_errors >= wanted {
            let ok = self.asm.label();
            self.asm.br(Cond::SGe, ret, Src::Imm(0), ok);
            let span = self.asm.span();
            self.report_helper_error(helper, span, Src::Reg(ret));
            self.asm.bind(ok);
        }
        ret
    }

    /// With `-k`: a map read whose key is missing (`value` is null), reported
    /// as bpftrace reports it, a failed `map_lookup_elem` with return code 0.
    pub(crate) fn check_lookup(&mut self, value: VReg, span: source::Span) {
        if self.helper_errors < abi::HelperErrors::Helpers {
            return;
        }
        let found = self.asm.label();
        self.asm.br(Cond::Ne, value, Src::Imm(0), found);
        self.report_helper_error(Helper::MAP_LOOKUP_ELEM, span, Src::Imm(0));
        self.asm.bind(found);
    }

    /// Sends the [`EventKind::HelperError`] record of a new call site.
    fn report_helper_error(&mut self, helper: Helper, span: source::Span, ret: Src) {
        let site = self.helper_site_base + self.helper_sites.len();
        self.helper_sites.push(abi::HelperErrorSite {
            helper: helper.name().map_or_else(
                || format!("helper {}", helper.0),
                |n| n.trim_start_matches("bpf_").to_string(),
            ),
            span: (span.start, span.end),
            probe: self.probe.resolved.name.clone(),
        });
        self.emit_event(
            EventKind::HelperError,
            site as u32,
            |l, rec| l.asm.store(rec, 8, ret, Width::DW),
            16,
        );
    }

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
