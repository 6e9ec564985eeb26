//! Kernel function probes and raw tracepoints, attached through libbpf:
//!
//! - kprobe/kretprobe: `bpf_program__attach_kprobe_opts` (the kprobe PMU, or
//!   tracefs `kprobe_events` on old kernels), at `MODULE:FUNCTION+OFFSET`;
//! - fentry/fexit: `bpf_program__attach_trace` (the BTF id was resolved by
//!   libbpf from the program's section at load);
//! - rawtracepoint: `bpf_program__attach_raw_tracepoint`.

use std::ffi::CString;
use std::ptr::NonNull;

use libbpf_rs::Link;
use libbpf_rs::libbpf_sys;

use super::classify;
use crate::error::{AttachError, SyscallError};

/// Where a kprobe goes: what [`abi::Attach::Kprobe`] carries.
pub(crate) struct Target<'a> {
    pub func: &'a str,
    pub module: Option<&'a str>,
    pub offset: u64,
    pub retprobe: bool,
}

/// `MODULE:FUNCTION` as the kernel's kprobe interface spells it.
pub(crate) fn kprobe_symbol(func: &str, module: Option<&str>) -> String {
    match module {
        Some(m) => format!("{m}:{func}"),
        None => func.to_string(),
    }
}

pub(crate) fn attach_kprobe(
    prog: NonNull<libbpf_sys::bpf_program>,
    target: &Target<'_>,
    probe: &str,
) -> Result<Link, AttachError> {
    let name = CString::new(kprobe_symbol(target.func, target.module)).map_err(|_| {
        AttachError::Other {
            probe: probe.to_string(),
            source: SyscallError::new(
                "bpf_program__attach_kprobe_opts",
                std::io::Error::from_raw_os_error(libc::EINVAL),
            ),
        }
    })?;
    let opts = libbpf_sys::bpf_kprobe_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_kprobe_opts>() as _,
        offset: target.offset as _,
        retprobe: target.retprobe,
        ..Default::default()
    };
    // SAFETY: a loaded program of a live object, a NUL-terminated name, sized options.
    let link =
        unsafe { libbpf_sys::bpf_program__attach_kprobe_opts(prog.as_ptr(), name.as_ptr(), &opts) };
    finish(link, "bpf_program__attach_kprobe_opts", probe)
}

pub(crate) fn attach_trampoline(
    prog: NonNull<libbpf_sys::bpf_program>,
    probe: &str,
) -> Result<Link, AttachError> {
    // SAFETY: a loaded program of a live object.
    let link = unsafe { libbpf_sys::bpf_program__attach_trace(prog.as_ptr()) };
    finish(link, "bpf_program__attach_trace", probe)
}

pub(crate) fn attach_raw_tracepoint(
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
    // SAFETY: a loaded program of a live object and a NUL-terminated name.
    let link =
        unsafe { libbpf_sys::bpf_program__attach_raw_tracepoint(prog.as_ptr(), cname.as_ptr()) };
    finish(link, "bpf_raw_tracepoint_open", probe)
}

/// A libbpf link pointer, or the typed error it encodes.
fn finish(
    link: *mut libbpf_sys::bpf_link,
    call: &'static str,
    probe: &str,
) -> Result<Link, AttachError> {
    // SAFETY: libbpf_get_error accepts any pointer returned by libbpf.
    let err = unsafe { libbpf_sys::libbpf_get_error(link as *const _) };
    match NonNull::new(link) {
        Some(ptr) if err == 0 => {
            // SAFETY: non-null, error-checked link pointer from libbpf.
            Ok(unsafe { Link::from_ptr(ptr) })
        }
        _ => {
            let err = if err != 0 {
                err
            } else {
                -(libc::EINVAL as i64)
            };
            Err(classify(
                probe,
                SyscallError::from_neg(call, err),
                "CAP_PERFMON",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_functions_are_qualified() {
        assert_eq!(kprobe_symbol("vfs_read", None), "vfs_read");
        assert_eq!(kprobe_symbol("xfs_open", Some("xfs")), "xfs:xfs_open");
    }
}
