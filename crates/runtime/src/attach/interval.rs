//! `interval:...`: a software cpu-clock perf event on CPU 0 firing every `period_ns`.

use std::os::fd::OwnedFd;

use libbpf_rs::libbpf_sys;

use crate::error::AttachError;

pub(super) fn open(period_ns: u64, probe: &str) -> Result<OwnedFd, AttachError> {
    super::perf_event::open_on(
        libbpf_sys::PERF_TYPE_SOFTWARE,
        libbpf_sys::PERF_COUNT_SW_CPU_CLOCK as u64,
        period_ns,
        0,
    )
    .map_err(|e| super::classify(probe, e, "CAP_PERFMON"))
}
