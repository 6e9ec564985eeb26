//! fentry/fexit (BPF trampolines), attached through libbpf's
//! `bpf_program__attach_trace`: the function's BTF id was resolved by libbpf
//! from the program's section when it loaded.

use std::ptr::NonNull;

use libbpf_rs::Link;
use libbpf_rs::libbpf_sys;

use super::finish;
use crate::error::AttachError;

pub(crate) fn attach(
    prog: NonNull<libbpf_sys::bpf_program>,
    probe: &str,
) -> Result<Link, AttachError> {
    // SAFETY: a loaded program of a live object.
    let link = unsafe { libbpf_sys::bpf_program__attach_trace(prog.as_ptr()) };
    finish(link, "bpf_program__attach_trace", probe)
}
