//! A BPF ring-buffer consumer over the map's memory mapping: records are
//! handed to the callback in place (no copy) and everything available is
//! drained on every call.
//!
//! Layout (kernel `kernel/bpf/ringbuf.c`): page 0 holds `consumer_pos`
//! (user-writable); page 1 holds `producer_pos`; the data area follows and
//! is mapped twice so a record that wraps is contiguous. Each record starts
//! with an 8-byte header whose first `u32` is its length plus the BUSY and
//! DISCARD bits.

use std::ops::ControlFlow;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use crate::error::SyscallError;
use crate::sys::{self, Mmap};

const BUSY_BIT: u32 = 1 << 31;
const DISCARD_BIT: u32 = 1 << 30;
const HDR_SZ: u64 = 8;

/// How long a busy consumer lets records pile up before draining again.
///
/// The kernel wakes the consumer for a record committed while the consumer
/// has caught up, so a consumer that drains every record at once pays (and
/// makes every producer pay) for one wakeup per record. Pausing this long
/// after a drain that found records turns that into about one wakeup per
/// pause; an idle consumer still blocks and is woken by the first record.
const BUSY_PAUSE: Duration = Duration::from_millis(1);

pub(crate) struct RingConsumer {
    consumer: Mmap,
    producer: Mmap,
    mask: u64,
    page: usize,
    /// The last drain found records.
    busy: bool,
}

// SAFETY: the mappings are owned by this value; access goes through atomics.
unsafe impl Send for RingConsumer {}

impl RingConsumer {
    /// Maps the ring buffer map `fd` whose data area is `size` bytes (`max_entries`).
    pub(crate) fn new(fd: RawFd, size: u32) -> Result<RingConsumer, SyscallError> {
        let page = sys::page_size();
        let consumer = Mmap::map(fd, page, 0, true)?;
        let producer = Mmap::map(fd, page + 2 * size as usize, page, false)?;
        Ok(RingConsumer {
            consumer,
            producer,
            mask: size as u64 - 1,
            page,
            busy: false,
        })
    }

    /// [`RingConsumer::consume`], first pausing up to `timeout` (at most
    /// [`BUSY_PAUSE`]) if the previous drain found records.
    pub(crate) fn consume_batched(
        &mut self,
        timeout: Duration,
        on_event: &mut dyn FnMut(&[u8]) -> ControlFlow<()>,
    ) -> (usize, bool) {
        if self.busy && !timeout.is_zero() {
            std::thread::sleep(timeout.min(BUSY_PAUSE));
        }
        self.consume(on_event)
    }

    fn consumer_pos(&self) -> &AtomicU64 {
        // SAFETY: page 0 of the map starts with the u64 consumer position.
        unsafe { &*(self.consumer.ptr as *const AtomicU64) }
    }

    fn producer_pos(&self) -> &AtomicU64 {
        // SAFETY: the producer page starts with the u64 producer position.
        unsafe { &*(self.producer.ptr as *const AtomicU64) }
    }

    /// Hands every committed record to `on_event`, in order, until none is
    /// left or it returns `Break`. Returns the number of records handed over
    /// and whether `on_event` asked to stop.
    pub(crate) fn consume(
        &mut self,
        on_event: &mut dyn FnMut(&[u8]) -> ControlFlow<()>,
    ) -> (usize, bool) {
        let (count, stop) = self.drain(on_event);
        self.busy = count > 0;
        (count, stop)
    }

    fn drain(&mut self, on_event: &mut dyn FnMut(&[u8]) -> ControlFlow<()>) -> (usize, bool) {
        let data = self.producer.ptr.wrapping_add(self.page);
        let mut count = 0;
        loop {
            let mut progressed = false;
            let mut cons = self.consumer_pos().load(Ordering::Acquire);
            let prod = self.producer_pos().load(Ordering::Acquire);
            while cons < prod {
                let off = (cons & self.mask) as usize;
                // SAFETY: `off` is inside the data area; headers are 8-byte aligned.
                let hdr = unsafe { &*(data.add(off) as *const AtomicU32) };
                let len = hdr.load(Ordering::Acquire);
                if len & BUSY_BIT != 0 {
                    // Reserved, not yet committed: the commit will wake us up.
                    return (count, false);
                }
                let size = len & !(BUSY_BIT | DISCARD_BIT);
                let next = cons + (size as u64 + HDR_SZ).next_multiple_of(8);
                let mut stop = false;
                if len & DISCARD_BIT == 0 {
                    // SAFETY: the record lies in the double-mapped data area.
                    let record = unsafe {
                        std::slice::from_raw_parts(data.add(off + HDR_SZ as usize), size as usize)
                    };
                    count += 1;
                    stop = on_event(record).is_break();
                }
                cons = next;
                self.consumer_pos().store(cons, Ordering::Release);
                progressed = true;
                if stop {
                    return (count, true);
                }
            }
            if !progressed {
                return (count, false);
            }
        }
    }
}
