//! The perf buffers `skboutput()` writes packets to (`abi::SKB_MAP`, one per
//! CPU: `bpf_skb_output` cannot write to the ring buffer), read through
//! libbpf's perf buffer. Each sample is a whole `EventKind::SkbOutput`
//! record; [`SkbPerf::drain`] hands them to the same callback as the ring
//! buffer's records. Samples the kernel had no room for are counted
//! ([`SkbPerf::lost`]) and reported with the ring buffer's losses.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use libbpf_rs::{MapCore, Object, PerfBuffer, PerfBufferBuilder};

use crate::error::SyscallError;

pub(crate) struct SkbPerf {
    buffer: PerfBuffer<'static>,
    samples: Arc<Mutex<VecDeque<Vec<u8>>>>,
    lost: Arc<Mutex<u64>>,
}

impl SkbPerf {
    /// The perf buffers of `object`'s [`abi::SKB_MAP`], if it has one,
    /// `pages` pages each (a power of two).
    pub(crate) fn open(object: &Object, pages: u32) -> Result<Option<SkbPerf>, SyscallError> {
        let Some(map) = object.maps().find(|m| m.name() == abi::SKB_MAP) else {
            return Ok(None);
        };
        let samples = Arc::new(Mutex::new(VecDeque::new()));
        let lost = Arc::new(Mutex::new(0u64));
        let (into, lost_into) = (Arc::clone(&samples), Arc::clone(&lost));
        let buffer = PerfBufferBuilder::new(&map)
            .pages(pages as usize)
            .sample_cb(move |_cpu, data: &[u8]| {
                if let Ok(mut q) = into.lock() {
                    q.push_back(data.to_vec());
                }
            })
            .lost_cb(move |_cpu, n| {
                if let Ok(mut l) = lost_into.lock() {
                    *l += n;
                }
            })
            .build()
            .map_err(|e| {
                SyscallError::new("perf_buffer__new", std::io::Error::other(e.to_string()))
            })?;
        Ok(Some(SkbPerf {
            buffer,
            samples,
            lost,
        }))
    }

    /// An epoll fd readable while samples wait.
    pub(crate) fn epoll_fd(&self) -> i32 {
        self.buffer.epoll_fd()
    }

    /// Hands every waiting sample to `on_event`, in the order each CPU's
    /// buffer holds them; stops early when it returns `Break` (the rest
    /// wait for the next call). Returns how many it handed over.
    pub(crate) fn drain(&mut self, on_event: &mut dyn FnMut(&[u8]) -> ControlFlow<()>) -> usize {
        // A failed read leaves the samples in the kernel's buffers for the next call.
        let _ = self.buffer.consume();
        let mut handed = 0;
        loop {
            let next = self.samples.lock().ok().and_then(|mut q| q.pop_front());
            let Some(sample) = next else {
                return handed;
            };
            handed += 1;
            if on_event(&sample).is_break() {
                return handed;
            }
        }
    }

    /// Samples the kernel dropped because a CPU's buffer was full.
    pub(crate) fn lost(&self) -> u64 {
        self.lost.lock().map_or(0, |l| *l)
    }
}
