//! `interval:...`: a software cpu-clock perf event on CPU 0 firing every `period_ns`.

use std::os::fd::OwnedFd;

use libbpf_rs::libbpf_sys;

use crate::error::AttachError;
use crate::sys;

pub(super) fn open(period_ns: u64, probe: &str) -> Result<OwnedFd, AttachError> {
    let mut attr = sys::perf_attr(
        libbpf_sys::PERF_TYPE_SOFTWARE,
        libbpf_sys::PERF_COUNT_SW_CPU_CLOCK as u64,
    );
    attr.__bindgen_anon_1.sample_period = period_ns.max(1);
    sys::perf_event_open(&attr, -1, 0).map_err(|e| super::classify(probe, e, "CAP_PERFMON"))
}
