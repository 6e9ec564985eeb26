//! rawtracepoint, attached through libbpf's
//! `bpf_program__attach_raw_tracepoint` (`bpf_raw_tracepoint_open`); a
//! `tp_btf` program (a tracing program whose tracepoint libbpf resolved from
//! its section at load) through `bpf_program__attach_trace`.

use std::ffi::CString;
use std::ptr::NonNull;

use libbpf_rs::Link;
use libbpf_rs::libbpf_sys;

use super::finish;
use crate::error::{AttachError, SyscallError};

pub(crate) fn attach(
    prog: NonNull<libbpf_sys::bpf_program>,
    name: &str,
    probe: &str,
) -> Result<Link, AttachError> {
    let Ok(cname) = CString::new(name) else {
        return Err(AttachError::Other {
            probe: probe.to_string(),
            source: SyscallError::new(
                "bpf_raw_tracepoint_open",
                std::io::Error::from_raw_os_error(libc::EINVAL),
            ),
        });
    };
    // SAFETY: a loaded program of a live object.
    if unsafe { libbpf_sys::bpf_program__type(prog.as_ptr()) } == libbpf_sys::BPF_PROG_TYPE_TRACING
    {
        return super::trampoline::attach(prog, probe);
    }
    // SAFETY: a loaded program of a live object and a NUL-terminated name.
    let link =
        unsafe { libbpf_sys::bpf_program__attach_raw_tracepoint(prog.as_ptr(), cname.as_ptr()) };
    finish(link, "bpf_raw_tracepoint_open", probe)
}
