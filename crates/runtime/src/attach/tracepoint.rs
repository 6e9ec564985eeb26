//! `tracepoint:category:name`: a `PERF_TYPE_TRACEPOINT` event with the id from tracefs.

use std::io;
use std::os::fd::OwnedFd;

use libbpf_rs::libbpf_sys;

use crate::error::{AttachError, SyscallError};
use crate::sys;
use crate::tracefs::Tracefs;

pub(super) fn open(category: &str, name: &str, probe: &str) -> Result<OwnedFd, AttachError> {
    let tracefs = Tracefs::shared().map_err(|source| AttachError::TracefsUnavailable {
        probe: probe.to_string(),
        source,
    })?;
    let id = tracefs.id(category, name).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => AttachError::TracepointNotFound {
            probe: probe.to_string(),
        },
        _ => super::classify(
            probe,
            SyscallError::new("read tracepoint id", e),
            "CAP_SYS_ADMIN",
        ),
    })?;
    let attr = sys::perf_attr(libbpf_sys::PERF_TYPE_TRACEPOINT, id);
    // A tracepoint BPF program fires on every CPU; the event is opened on CPU 0, as libbpf does.
    sys::perf_event_open(&attr, -1, 0).map_err(|e| super::classify(probe, e, "CAP_PERFMON"))
}
