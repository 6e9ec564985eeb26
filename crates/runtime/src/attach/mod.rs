//! Attaching programs, one file per attach mechanism (`abi::Attach` is by
//! mechanism, not by provider: a provider that reuses one needs nothing
//! here). Perf-event mechanisms (tracepoint, interval, perf_event, uprobe)
//! turn an [`Attach`] into a perf event fd that [`attach_perf_event`] links
//! the program to; kprobe, trampoline and raw tracepoint attach through one
//! libbpf call each, whose result [`finish`] turns into a link or a typed error.

mod interval;
pub(crate) mod iter;
mod kprobe;
mod perf_event;
mod raw_tracepoint;
mod tracepoint;
mod trampoline;
mod uprobe;

use std::os::fd::{IntoRawFd, OwnedFd};
use std::ptr::NonNull;

use abi::Attach;
use libbpf_rs::Link;
use libbpf_rs::libbpf_sys;

use crate::error::{AttachError, SyscallError};

/// Attaches `prog` per `attach`: one link per perf event (sampling probes
/// open one per online CPU). What user space runs (`BEGIN`/`END`, `self`
/// signal and `bench` probes) is not attached: no link.
pub(crate) fn attach(
    prog: NonNull<libbpf_sys::bpf_program>,
    attach: &Attach,
    probe: &str,
) -> Result<Vec<Link>, AttachError> {
    let pfd = match attach {
        Attach::Begin | Attach::End | Attach::Signal { .. } | Attach::Bench { .. } => {
            return Ok(Vec::new());
        }
        Attach::Kprobe {
            func,
            module,
            offset,
            retprobe,
        } => {
            let target = kprobe::Target {
                func,
                module: module.as_deref(),
                offset: *offset,
                retprobe: *retprobe,
            };
            return kprobe::attach_kprobe(prog, &target, probe).map(|l| vec![l]);
        }
        Attach::Fentry { .. } => return trampoline::attach(prog, probe).map(|l| vec![l]),
        Attach::Iter { .. } => return iter::attach(prog, probe).map(|l| vec![l]),
        Attach::RawTracepoint { name } => {
            return raw_tracepoint::attach(prog, name, probe).map(|l| vec![l]);
        }
        Attach::PerfEvent {
            event_type,
            config,
            period,
        } => {
            return perf_event::open_all(*event_type, *config, *period, probe)?
                .into_iter()
                .map(|pfd| attach_perf_event(prog, pfd, probe))
                .collect();
        }
        Attach::Tracepoint { category, name } => tracepoint::open(category, name, probe)?,
        Attach::Interval { period_ns } => interval::open(*period_ns, probe)?,
        Attach::Uprobe {
            path,
            offset,
            retprobe,
            pid,
            ref_ctr_offset,
            from_wildcard: _,
        } => uprobe::open(
            &uprobe::Target {
                path,
                offset: *offset,
                retprobe: *retprobe,
                pid: *pid,
                ref_ctr_offset: *ref_ctr_offset,
            },
            probe,
        )?,
    };
    attach_perf_event(prog, pfd, probe).map(|link| vec![link])
}

/// Links `prog` to the perf event `pfd` (the link owns and closes `pfd`).
fn attach_perf_event(
    prog: NonNull<libbpf_sys::bpf_program>,
    pfd: OwnedFd,
    probe: &str,
) -> Result<Link, AttachError> {
    use std::os::fd::AsRawFd;
    // SAFETY: `prog` is a loaded program of a live object; `pfd` is a valid perf event.
    let ptr = unsafe { libbpf_sys::bpf_program__attach_perf_event(prog.as_ptr(), pfd.as_raw_fd()) };
    // SAFETY: libbpf_get_error accepts any pointer returned by libbpf.
    let err = unsafe { libbpf_sys::libbpf_get_error(ptr as *const _) };
    if err != 0 || ptr.is_null() {
        let err = if err != 0 {
            err
        } else {
            -(libc::EINVAL as i64)
        };
        // libbpf does not take `pfd` on failure; dropping it closes it.
        return Err(classify(
            probe,
            SyscallError::from_neg("bpf_link_create", err),
            "CAP_PERFMON",
        ));
    }
    // libbpf owns the fd now (closed by bpf_link__destroy).
    let _ = pfd.into_raw_fd();
    // SAFETY: non-null, error-checked link pointer from libbpf.
    Ok(unsafe { Link::from_ptr(NonNull::new_unchecked(ptr)) })
}

/// Maps an errno to the typed attach error.
pub(crate) fn classify(probe: &str, e: SyscallError, capability: &'static str) -> AttachError {
    let probe = probe.to_string();
    match e.errno() {
        Some(libc::EPERM) | Some(libc::EACCES) => AttachError::Permission {
            probe,
            capability,
            source: e,
        },
        Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) | Some(libc::ENOSYS) | Some(524) => {
            AttachError::Unsupported { probe, source: e }
        }
        _ => AttachError::Other { probe, source: e },
    }
}

/// A libbpf link pointer, or the typed error it encodes.
pub(crate) fn finish(
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
