//! Feature probes for kernel function tracing, each a tiny program load or
//! link attempt whose errno says whether the kernel has the mechanism:
//!
//! - BPF trampolines (fentry/fexit): load a two-instruction fentry program
//!   on a vmlinux function; the kernel refuses with EPERM, EOPNOTSUPP or
//!   ENOTSUPP (524) when it cannot build trampolines.
//! - `kprobe_multi` / `uprobe_multi` links: create one with a bad target, the
//!   way libbpf probes them; EINVAL (kprobe) or EBADF (uprobe) means the kernel
//!   parsed the request, so the link type exists.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};

use libbpf_rs::libbpf_sys;

use crate::Support;
use crate::kernel_info::vmlinux_btf;
use crate::libbpf_log::silence_libbpf;

/// `r0 = 0; exit`, encoded.
const RETURN_ZERO: [u64; 2] = [0xb7, 0x95];

/// Functions any kernel has, to hang the probe's trampoline on.
const PROBE_TARGETS: &[&str] = &["bpf_fentry_test1", "vfs_read", "schedule"];

/// Loads a program of `prog_type` returning 0; `Err((errno, last log line))`.
fn load(
    prog_type: libbpf_sys::bpf_prog_type,
    attach_type: libbpf_sys::bpf_attach_type,
    attach_btf_id: u32,
) -> Result<OwnedFd, (i32, String)> {
    silence_libbpf();
    let mut log = vec![0u8; 4096];
    let mut opts = libbpf_sys::bpf_prog_load_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_prog_load_opts>() as _,
        expected_attach_type: attach_type,
        attach_btf_id,
        log_level: 1,
        log_size: log.len() as u32,
        log_buf: log.as_mut_ptr().cast(),
        ..Default::default()
    };
    let license = c"GPL";
    // SAFETY: two valid instructions (bpf_insn is 8 bytes, the layout of a u64
    // here), a NUL-terminated license, sized options whose log buffer outlives the call.
    let fd = unsafe {
        libbpf_sys::bpf_prog_load(
            prog_type,
            std::ptr::null(),
            license.as_ptr(),
            RETURN_ZERO.as_ptr().cast(),
            RETURN_ZERO.len() as _,
            &mut opts,
        )
    };
    if fd < 0 {
        let text = String::from_utf8_lossy(&log);
        let last = text
            .trim_end_matches('\0')
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.starts_with("processed"))
            .unwrap_or("")
            .trim()
            .to_string();
        return Err((-fd, last));
    }
    // SAFETY: a fresh fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn errno_text(errno: i32) -> String {
    match errno {
        libc::EPERM => "EPERM".to_string(),
        libc::EACCES => "EACCES".to_string(),
        libc::EINVAL => "EINVAL".to_string(),
        libc::EOPNOTSUPP => "EOPNOTSUPP".to_string(),
        libc::ENOENT => "ENOENT".to_string(),
        524 => "ENOTSUPP".to_string(),
        e => std::io::Error::from_raw_os_error(e).to_string(),
    }
}

/// Can this kernel load fentry/fexit programs (BPF trampolines)?
pub fn trampolines() -> Support {
    let btf = match vmlinux_btf() {
        Ok(b) => b,
        Err(e) => return Support::No(format!("fentry needs kernel BTF: {e}")),
    };
    let Some(id) = PROBE_TARGETS
        .iter()
        .find_map(|f| btf.find(ktypes::btf::kind::FUNC, f))
    else {
        return Support::No("no function to probe in the kernel's BTF".into());
    };
    match load(
        libbpf_sys::BPF_PROG_TYPE_TRACING,
        libbpf_sys::BPF_TRACE_FENTRY,
        id,
    ) {
        Ok(_) => Support::Yes,
        Err((errno, log)) => {
            let why = match errno {
                libc::EPERM | libc::EACCES => "the kernel refused to load a trampoline program",
                libc::EOPNOTSUPP | 524 | libc::ENOSYS => "the kernel cannot build BPF trampolines",
                _ => "loading a trampoline program failed",
            };
            let log = if log.is_empty() {
                String::new()
            } else {
                format!("; verifier: {log}")
            };
            Support::No(format!("{why} ({}{log})", errno_text(errno)))
        }
    }
}

/// Can this kernel create `kprobe_multi` links (one link, many functions)?
pub fn kprobe_multi() -> Support {
    let prog = match load(
        libbpf_sys::BPF_PROG_TYPE_KPROBE,
        libbpf_sys::BPF_TRACE_KPROBE_MULTI,
        0,
    ) {
        Ok(fd) => fd,
        Err((errno, _)) => {
            return Support::No(format!(
                "a kprobe_multi program does not load ({})",
                errno_text(errno)
            ));
        }
    };
    let addrs: [libc::c_ulong; 1] = [0];
    let mut opts = libbpf_sys::bpf_link_create_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_link_create_opts>() as _,
        ..Default::default()
    };
    opts.__bindgen_anon_1.kprobe_multi =
        libbpf_sys::bpf_link_create_opts__bindgen_ty_1__bindgen_ty_2 {
            cnt: 1,
            addrs: addrs.as_ptr(),
            ..Default::default()
        };
    link_probe(
        &prog,
        libbpf_sys::BPF_TRACE_KPROBE_MULTI,
        &opts,
        libc::EINVAL,
        "kprobe_multi",
    )
}

/// Does a BTF-typed raw tracepoint program (`tp_btf`, for `sched_switch`)
/// load here? (No trampoline is needed: it attaches as raw tracepoints do.)
pub fn tp_btf() -> Support {
    let btf = match vmlinux_btf() {
        Ok(b) => b,
        Err(e) => return Support::No(format!("tp_btf needs kernel BTF: {e}")),
    };
    let Some(id) = btf.find(ktypes::btf::kind::TYPEDEF, "btf_trace_sched_switch") else {
        return Support::No("no btf_trace_sched_switch in the kernel's BTF".into());
    };
    match load(
        libbpf_sys::BPF_PROG_TYPE_TRACING,
        libbpf_sys::BPF_TRACE_RAW_TP,
        id,
    ) {
        Ok(_) => Support::Yes,
        Err((errno, _)) => Support::No(format!(
            "a tp_btf program does not load ({})",
            errno_text(errno)
        )),
    }
}

/// Can this kernel create `uprobe_multi` links?
pub fn uprobe_multi() -> Support {
    let prog = match load(
        libbpf_sys::BPF_PROG_TYPE_KPROBE,
        libbpf_sys::BPF_TRACE_UPROBE_MULTI,
        0,
    ) {
        Ok(fd) => fd,
        Err((errno, _)) => {
            return Support::No(format!(
                "a uprobe_multi program does not load ({})",
                errno_text(errno)
            ));
        }
    };
    let offsets: [libc::c_ulong; 1] = [0];
    let path = CString::from(c"/");
    let mut opts = libbpf_sys::bpf_link_create_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_link_create_opts>() as _,
        ..Default::default()
    };
    opts.__bindgen_anon_1.uprobe_multi =
        libbpf_sys::bpf_link_create_opts__bindgen_ty_1__bindgen_ty_3 {
            cnt: 1,
            path: path.as_ptr(),
            offsets: offsets.as_ptr(),
            ..Default::default()
        };
    link_probe(
        &prog,
        libbpf_sys::BPF_TRACE_UPROBE_MULTI,
        &opts,
        libc::EBADF,
        "uprobe_multi",
    )
}

/// Creates a link that must fail with `expected` if the kernel knows the type.
fn link_probe(
    prog: &OwnedFd,
    attach_type: libbpf_sys::bpf_attach_type,
    opts: &libbpf_sys::bpf_link_create_opts,
    expected: i32,
    what: &str,
) -> Support {
    use std::os::fd::AsRawFd;
    // SAFETY: a loaded program fd and sized options whose pointers outlive the call.
    let fd = unsafe { libbpf_sys::bpf_link_create(prog.as_raw_fd(), -1, attach_type, opts) };
    if fd >= 0 {
        // SAFETY: a fresh fd we own; dropping closes it.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
        return Support::Yes;
    }
    if -fd == expected {
        Support::Yes
    } else {
        Support::No(format!(
            "the kernel does not create {what} links ({})",
            errno_text(-fd)
        ))
    }
}

/// Does this kernel have kprobes: the `kprobe` perf PMU, or tracefs
/// `kprobe_events` (older kernels)? Two file checks.
pub fn kprobes() -> bool {
    if std::path::Path::new("/sys/bus/event_source/devices/kprobe/type").exists() {
        return true;
    }
    crate::tracefs::Tracefs::shared().is_ok_and(|t| t.root().join("kprobe_events").exists())
}
