//! kprobe/kretprobe, attached through libbpf's
//! `bpf_program__attach_kprobe_opts` (the kprobe PMU, or tracefs
//! `kprobe_events` on old kernels), at `MODULE:FUNCTION+OFFSET`; a refusal
//! becomes a typed error by errno.

use std::ffi::CString;
use std::ptr::NonNull;

use libbpf_rs::Link;
use libbpf_rs::libbpf_sys;

use super::{classify, finish};
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
    finish(link, "bpf_program__attach_kprobe_opts", probe).map_err(|e| match e {
        AttachError::Permission { source, .. }
        | AttachError::Unsupported { source, .. }
        | AttachError::Other { source, .. } => {
            kprobe_error(probe, target, source, crate::kernel_features::kprobes())
        }
        other => other,
    })
}

/// The typed error for a kprobe the kernel would not attach, by errno:
/// ENOENT (no such function), EINVAL (refused place), EPERM/EACCES. On a
/// kernel without kprobes (`kprobes` false) every failure is `Unsupported`.
pub(crate) fn kprobe_error(
    probe: &str,
    target: &Target<'_>,
    e: SyscallError,
    kprobes: bool,
) -> AttachError {
    let probe = probe.to_string();
    let func = kprobe_symbol(target.func, target.module);
    if !kprobes {
        return AttachError::Unsupported { probe, source: e };
    }
    match e.errno() {
        Some(libc::ENOENT) | Some(libc::ENXIO) => AttachError::KprobeNotFound { probe, func },
        Some(libc::EINVAL) | Some(libc::EILSEQ) => AttachError::KprobeRefused {
            probe,
            func,
            offset: target.offset,
        },
        Some(libc::EPERM) | Some(libc::EACCES) => AttachError::KprobePermission { probe },
        _ => classify(&probe, e, "CAP_PERFMON"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errno(n: i32) -> SyscallError {
        SyscallError::new(
            "bpf_program__attach_kprobe_opts",
            std::io::Error::from_raw_os_error(n),
        )
    }

    #[test]
    fn kprobe_errnos_become_typed_errors() {
        let at = |offset| Target {
            func: "vfs_read",
            module: None,
            offset,
            retprobe: false,
        };
        let e = kprobe_error("kprobe:vfs_read", &at(0), errno(libc::ENOENT), true);
        assert!(
            matches!(&e, AttachError::KprobeNotFound { func, .. } if func == "vfs_read"),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "kprobe:vfs_read: no such kernel function, or it cannot be probed"
        );
        let e = kprobe_error("kprobe:vfs_read+3", &at(3), errno(libc::EINVAL), true);
        assert_eq!(
            e.to_string(),
            "kprobe:vfs_read+3: the kernel refused a kprobe on `vfs_read` at offset 3"
        );
        let e = kprobe_error("kprobe:vfs_read", &at(0), errno(libc::EINVAL), true);
        assert_eq!(
            e.to_string(),
            "kprobe:vfs_read: the kernel refused a kprobe on `vfs_read`"
        );
        for n in [libc::EPERM, libc::EACCES] {
            let e = kprobe_error("kprobe:vfs_read", &at(0), errno(n), true);
            assert!(matches!(e, AttachError::KprobePermission { .. }), "{e:?}");
        }
        let e = kprobe_error("kprobe:vfs_read", &at(0), errno(libc::EBUSY), true);
        assert!(matches!(e, AttachError::Other { .. }), "{e:?}");
        // Without kprobes in the kernel, the cause is the kernel, whatever the errno.
        let e = kprobe_error("kprobe:vfs_read", &at(0), errno(libc::ENOENT), false);
        assert!(matches!(e, AttachError::Unsupported { .. }), "{e:?}");
        // A module function is named as the kernel spells it.
        let in_module = Target {
            func: "xfs_open",
            module: Some("xfs"),
            offset: 0,
            retprobe: true,
        };
        let e = kprobe_error(
            "kretprobe:xfs:xfs_open",
            &in_module,
            errno(libc::ENOENT),
            true,
        );
        assert!(
            matches!(&e, AttachError::KprobeNotFound { func, .. } if func == "xfs:xfs_open"),
            "{e:?}"
        );
    }

    #[test]
    fn module_functions_are_qualified() {
        assert_eq!(kprobe_symbol("vfs_read", None), "vfs_read");
        assert_eq!(kprobe_symbol("xfs_open", Some("xfs")), "xfs:xfs_open");
    }
}
