//! Keeps the memory map of the `-c` command as it exits, so its user stacks
//! and symbols can be resolved after it is gone.
//!
//! A watcher thread traces the command with `PTRACE_SEIZE` and only the
//! `PTRACE_O_TRACEEXIT` option: signals are handed back at once (so the
//! command behaves as untraced), group stops are listened to, and at the
//! exit stop, its memory still mapped, the thread reads `/proc/PID/maps`
//! into the shared [`ExitMaps`] and lets it go: the command waits only for
//! that read, not for symbols. The thread also reaps the command, and makes
//! [`ExitWatch::wake_fd`] readable when it has exited, so the run loop,
//! which waits on it with the ring buffer, ends at once. When the command
//! cannot be traced, the thread only waits for the exit.

use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use crate::symbols::ExitMaps;

struct Shared {
    exited: AtomicBool,
    /// An eventfd the thread signals once the command has exited.
    wake: Option<OwnedFd>,
}

impl Shared {
    fn set_exited(&self) {
        use std::os::fd::AsRawFd;
        self.exited.store(true, Ordering::Release);
        if let Some(fd) = &self.wake {
            // SAFETY: an eventfd takes an 8-byte counter increment.
            unsafe { libc::write(fd.as_raw_fd(), 1u64.to_ne_bytes().as_ptr().cast(), 8) };
        }
    }
}

/// A non-blocking eventfd (None if the kernel refuses one: the run loop
/// then notices the exit at its next poll interval).
fn eventfd() -> Option<OwnedFd> {
    // SAFETY: plain syscall.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    // SAFETY: a non-negative result is a descriptor we own.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The watcher thread of one child process.
pub struct ExitWatch {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl ExitWatch {
    /// Starts watching our child `pid`, keeping its memory map in
    /// `exit_maps` at its exit; returns once it is traced (or tracing was
    /// refused, in which case its map is not kept and its symbols resolve
    /// only while it runs).
    pub fn start(pid: libc::pid_t, exit_maps: ExitMaps) -> ExitWatch {
        let shared = Arc::new(Shared {
            exited: AtomicBool::new(false),
            wake: eventfd(),
        });
        let (ready_tx, ready_rx) = mpsc::channel();
        let for_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("weft-child".into())
            .spawn(move || watch(pid, &for_thread, &exit_maps, &ready_tx))
            .ok();
        // The thread answers before it waits; a closed channel means it ended.
        if thread.is_some() {
            let _ = ready_rx.recv();
        }
        ExitWatch { shared, thread }
    }

    /// Readable once the command has exited.
    pub fn wake_fd(&self) -> Option<BorrowedFd<'_>> {
        self.shared.wake.as_ref().map(|fd| fd.as_fd())
    }

    /// True if the watcher thread runs (otherwise the caller reaps the child).
    pub fn active(&self) -> bool {
        self.thread.is_some()
    }

    /// True once the command has exited and was reaped.
    pub fn exited(&self) -> bool {
        self.shared.exited.load(Ordering::Acquire)
    }

    /// Waits for the watcher thread (after the command was made to exit).
    pub fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The watcher thread: trace, pass signals on, keep the map at exit, reap.
fn watch(pid: libc::pid_t, shared: &Shared, exit_maps: &ExitMaps, ready: &mpsc::Sender<bool>) {
    // SAFETY: PTRACE_SEIZE on our own child; the data argument carries options.
    let traced = unsafe {
        libc::ptrace(
            libc::PTRACE_SEIZE,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            libc::PTRACE_O_TRACEEXIT as usize as *mut libc::c_void,
        )
    } == 0;
    let _ = ready.send(traced);
    loop {
        let mut status = 0;
        // SAFETY: a blocking wait on our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if r == -1 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            shared.set_exited();
            return;
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            shared.set_exited();
            return;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        let (request, signal) = match stop_kind(status) {
            Stop::Exit => {
                exit_maps.record_now(pid as u32);
                (libc::PTRACE_CONT, 0)
            }
            Stop::Group => (libc::PTRACE_LISTEN, 0),
            Stop::GroupEnd => (libc::PTRACE_CONT, 0),
            Stop::Signal(sig) => (libc::PTRACE_CONT, sig),
        };
        // SAFETY: resuming our stopped tracee; data is the signal to deliver.
        unsafe {
            libc::ptrace(
                request,
                pid,
                std::ptr::null_mut::<libc::c_void>(),
                signal as usize as *mut libc::c_void,
            );
        }
    }
}

/// What a ptrace stop reported by `waitpid` is.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    /// `PTRACE_EVENT_EXIT`: about to exit.
    Exit,
    /// `PTRACE_EVENT_STOP` with a stopping signal: a group stop (SIGSTOP,
    /// SIGTSTP) of a seized tracee; it stays stopped, listening for SIGCONT.
    Group,
    /// `PTRACE_EVENT_STOP` with SIGTRAP: the group stop ended (SIGCONT).
    GroupEnd,
    /// A signal about to be delivered: pass it on.
    Signal(i32),
}

fn stop_kind(status: i32) -> Stop {
    match (status >> 16) & 0xff {
        libc::PTRACE_EVENT_EXIT => Stop::Exit,
        libc::PTRACE_EVENT_STOP if libc::WSTOPSIG(status) == libc::SIGTRAP => Stop::GroupEnd,
        libc::PTRACE_EVENT_STOP => Stop::Group,
        _ => Stop::Signal(libc::WSTOPSIG(status)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `waitpid` status of a stop: `0x7f | sig << 8 | event << 16`.
    fn stopped(sig: i32, event: i32) -> i32 {
        0x7f | (sig << 8) | (event << 16)
    }

    #[test]
    fn classifies_stops() {
        assert_eq!(
            stop_kind(stopped(libc::SIGTRAP, libc::PTRACE_EVENT_EXIT)),
            Stop::Exit
        );
        assert_eq!(
            stop_kind(stopped(libc::SIGSTOP, libc::PTRACE_EVENT_STOP)),
            Stop::Group
        );
        assert_eq!(
            stop_kind(stopped(libc::SIGTRAP, libc::PTRACE_EVENT_STOP)),
            Stop::GroupEnd
        );
        assert_eq!(
            stop_kind(stopped(libc::SIGCHLD, 0)),
            Stop::Signal(libc::SIGCHLD)
        );
    }

    #[test]
    fn keeps_the_memory_map_of_a_child_at_its_exit() {
        let mut fds = [0; 2];
        // SAFETY: fds has room for two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: the child only calls read and _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let mut b = 0u8;
            // SAFETY: waiting for the go byte, then leaving the forked test child.
            unsafe {
                libc::read(fds[0], (&raw mut b).cast(), 1);
                libc::_exit(7);
            }
        }
        let exit_maps = ExitMaps::default();
        let mut watch = ExitWatch::start(pid, exit_maps.clone());
        assert!(watch.active());
        // SAFETY: releasing the child through our pipe.
        unsafe {
            libc::write(fds[1], [1u8].as_ptr().cast(), 1);
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !watch.exited() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(watch.exited(), "the child was not reaped");
        // The wake descriptor says so.
        let fd = watch.wake_fd().expect("an eventfd");
        let mut p = libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(&fd),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no waiting.
        assert_eq!(unsafe { libc::poll(&mut p, 1, 0) }, 1);
        watch.join();
        // The map was kept: our own executable is in it (the child is our fork).
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let mut symbols = crate::symbols::UserSymbols::with_exit_maps(exit_maps);
        let marker = keeps_the_memory_map_of_a_child_at_its_exit as *const () as u64;
        let found = symbols.lookup(pid as u32, &[marker]);
        let sym = found[0].as_ref().expect("resolved from the kept map");
        assert!(sym.name.contains("keeps_the_memory_map"), "{sym:?}");
        assert_eq!(sym.module.as_deref(), exe.to_str());
    }
}
