//! `iter:TARGET` (BPF iterators): the link comes from libbpf's
//! `bpf_program__attach_iter`, which found the target's BTF id from the
//! program's section (`iter/task`) at load. Attaching runs nothing: the
//! programs run while user space reads an iterator made from the link
//! ([`run`]), once per object, then once more with no object (the end).

use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;

use libbpf_rs::Link;
use libbpf_rs::libbpf_sys;

use super::finish;
use crate::error::{AttachError, SyscallError};

pub(crate) fn attach(
    prog: NonNull<libbpf_sys::bpf_program>,
    probe: &str,
) -> Result<Link, AttachError> {
    // SAFETY: a loaded program of a live object; NULL options are allowed.
    let link = unsafe { libbpf_sys::bpf_program__attach_iter(prog.as_ptr(), std::ptr::null()) };
    finish(link, "bpf_program__attach_iter", probe)
}

/// An iterator made from an `iter:` probe's link: reading it to its end
/// runs the probe's program over every object (the programs write to the
/// ring buffer; the iterator's own text is empty, read only to drive them).
/// It owns its descriptor, so a thread can read it while the ring buffer is
/// drained.
pub struct IteratorRun {
    /// The probe, for errors (`iter:task`).
    pub probe: String,
    file: std::fs::File,
}

impl IteratorRun {
    pub(crate) fn open(link: &Link, probe: &str) -> Result<IteratorRun, SyscallError> {
        // SAFETY: a live link's descriptor.
        let fd = unsafe { libbpf_sys::bpf_iter_create(link.as_fd().as_raw_fd()) };
        if fd < 0 {
            return Err(SyscallError::new(
                "bpf_iter_create",
                std::io::Error::last_os_error(),
            ));
        }
        Ok(IteratorRun {
            probe: probe.to_string(),
            // SAFETY: a new descriptor that nothing else owns.
            file: std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) }),
        })
    }

    /// Visits every object: reads the iterator to its end.
    pub fn run(mut self) -> Result<(), crate::RuntimeError> {
        let mut sink = [0u8; 4096];
        loop {
            match self.file.read(&mut sink) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(crate::RuntimeError::Iterate {
                        probe: self.probe,
                        source: SyscallError::new("read (BPF iterator)", e),
                    });
                }
            }
        }
    }
}
