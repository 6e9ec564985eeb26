//! The one door to the kernel for calls that do not go through libbpf:
//! every `unsafe` libc call of the crate lives here, returning the errno
//! as a [`SyscallError`] that names the call.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use crate::error::SyscallError;

fn last(call: &'static str) -> SyscallError {
    SyscallError::new(call, io::Error::last_os_error())
}

/// `CLOCK_MONOTONIC` now in nanoseconds: the clock of `bpf_ktime_get_ns`.
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC)`.
pub(crate) fn perf_event_open(
    attr: &libbpf_rs::libbpf_sys::perf_event_attr,
    pid: i32,
    cpu: i32,
) -> Result<OwnedFd, SyscallError> {
    // SAFETY: `attr` is a valid perf_event_attr whose `size` field is set by the caller.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const _,
            pid,
            cpu,
            -1i32,
            libbpf_rs::libbpf_sys::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    if fd < 0 {
        return Err(last("perf_event_open"));
    }
    // SAFETY: the kernel returned a fresh fd that we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A zeroed `perf_event_attr` of the given type and config.
pub(crate) fn perf_attr(type_: u32, config: u64) -> libbpf_rs::libbpf_sys::perf_event_attr {
    // SAFETY: perf_event_attr is plain data; all-zero is its documented default.
    let mut attr: libbpf_rs::libbpf_sys::perf_event_attr = unsafe { std::mem::zeroed() };
    attr.type_ = type_;
    attr.size = std::mem::size_of::<libbpf_rs::libbpf_sys::perf_event_attr>() as u32;
    attr.config = config;
    attr
}

/// `statfs(path).f_type`, or `None` when the path cannot be stat'ed.
pub(crate) fn fs_type(path: &CStr) -> Option<i64> {
    // SAFETY: all-zero statfs is valid; `path` is NUL-terminated.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::statfs(path.as_ptr(), &mut st) };
    (r == 0).then_some(st.f_type as i64)
}

/// `fsopen` flag from `linux/mount.h`: the context descriptor is close-on-exec.
const FSOPEN_CLOEXEC: libc::c_uint = 1;
/// `fsconfig` command from `linux/mount.h`: create the superblock.
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
/// `fsmount` flag from `linux/mount.h`: the mount descriptor is close-on-exec.
const FSMOUNT_CLOEXEC: libc::c_uint = 1;

/// A mount of `fstype` attached nowhere (Linux 5.2's mount API:
/// `fsopen`, `fsconfig(FSCONFIG_CMD_CREATE)`, `fsmount`): no mount table
/// shows it, its files are reached only through the returned descriptor,
/// and it is gone when the descriptor closes, however the process ends.
/// Works in a process with threads, where a mount namespace of its own
/// cannot be had (`unshare(CLONE_NEWNS)` moves only the calling thread).
pub(crate) fn detached_mount(fstype: &CStr) -> Result<OwnedFd, SyscallError> {
    // SAFETY: `fstype` is NUL-terminated; the result is a new descriptor or -1.
    let context = unsafe { libc::syscall(libc::SYS_fsopen, fstype.as_ptr(), FSOPEN_CLOEXEC) };
    if context < 0 {
        return Err(last("fsopen"));
    }
    // SAFETY: a new descriptor owned by nobody else.
    let context = unsafe { OwnedFd::from_raw_fd(context as RawFd) };
    // SAFETY: FSCONFIG_CMD_CREATE takes no key, value or aux.
    let r = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            context.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    if r < 0 {
        return Err(last("fsconfig(FSCONFIG_CMD_CREATE)"));
    }
    // SAFETY: plain syscall on a descriptor we own; no attribute flags.
    let mount =
        unsafe { libc::syscall(libc::SYS_fsmount, context.as_raw_fd(), FSMOUNT_CLOEXEC, 0) };
    if mount < 0 {
        return Err(last("fsmount"));
    }
    // SAFETY: a new descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(mount as RawFd) })
}

/// A new close-on-exec epoll instance.
pub(crate) fn epoll_create() -> Result<OwnedFd, SyscallError> {
    // SAFETY: plain syscall.
    let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if fd < 0 {
        return Err(last("epoll_create1"));
    }
    // SAFETY: fresh fd that we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Adds `fd` to `epoll` for `EPOLLIN`.
pub(crate) fn epoll_add(epoll: BorrowedFd<'_>, fd: RawFd) -> Result<(), SyscallError> {
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: fd as u64,
    };
    // SAFETY: `ev` is a valid epoll_event.
    let r = unsafe { libc::epoll_ctl(epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
    if r != 0 {
        return Err(last("epoll_ctl"));
    }
    Ok(())
}

/// Waits until `epoll` is readable or `timeout` passes. Returns `false` on
/// timeout or when interrupted by a signal (the caller re-checks its state).
pub(crate) fn epoll_wait(epoll: BorrowedFd<'_>, timeout: Duration) -> Result<bool, SyscallError> {
    let ms = timeout.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
    let mut ev = libc::epoll_event { events: 0, u64: 0 };
    // SAFETY: one writable event slot.
    let r = unsafe { libc::epoll_wait(epoll.as_raw_fd(), &mut ev, 1, ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(SyscallError::new("epoll_wait", e));
    }
    Ok(r > 0)
}

/// A shared memory mapping of a BPF map, unmapped on drop.
pub(crate) struct Mmap {
    pub(crate) ptr: *mut u8,
    pub(crate) len: usize,
}

impl Mmap {
    pub(crate) fn map(
        fd: RawFd,
        len: usize,
        offset: usize,
        writable: bool,
    ) -> Result<Mmap, SyscallError> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: mapping a kernel object; the result is checked.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd,
                offset as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(last("mmap"));
        }
        Ok(Mmap {
            ptr: ptr.cast(),
            len,
        })
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

pub(crate) fn page_size() -> usize {
    // SAFETY: plain libc call.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

/// The kernfs id of the directory `path` in its cgroup hierarchy
/// (`name_to_handle_at`, whose handle is the 64-bit id for kernfs):
/// the cgroup id BPF sees for a cgroup v2 directory.
pub(crate) fn cgroup_id(path: &CStr) -> Result<u64, SyscallError> {
    #[repr(C)]
    struct Handle {
        handle_bytes: libc::c_uint,
        handle_type: libc::c_int,
        id: u64,
    }
    let mut handle = Handle {
        handle_bytes: 8,
        handle_type: 0,
        id: 0,
    };
    let mut mount_id: libc::c_int = 0;
    // SAFETY: `handle` is a file_handle header followed by room for the
    // 8 bytes its `handle_bytes` announces; `path` is NUL-terminated.
    let r = unsafe {
        libc::syscall(
            libc::SYS_name_to_handle_at,
            libc::AT_FDCWD,
            path.as_ptr(),
            &mut handle as *mut Handle,
            &mut mount_id as *mut libc::c_int,
            0,
        )
    };
    if r < 0 {
        return Err(last("name_to_handle_at"));
    }
    Ok(handle.id)
}
