//! Holds the `-c` command at its exit, while its memory is still mapped, so
//! user stacks and symbols can be resolved before it disappears.
//!
//! A watcher thread traces the command with `PTRACE_SEIZE` and only the
//! `PTRACE_O_TRACEEXIT` option: signals are handed back at once (so the
//! command behaves as untraced), group stops are listened to, and at the
//! exit stop the thread waits until the run loop has read what it needs
//! ([`ExitWatch::let_exit`]). The thread also reaps the command. When the
//! command cannot be traced, it only waits for the exit.

use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::thread::JoinHandle;

/// Where the watched command is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Running,
    /// Stopped in `do_exit` before its memory is released.
    AtExit,
    /// Free to exit without being held (again).
    Released,
    /// Exited and reaped.
    Exited,
}

struct Shared {
    phase: Mutex<Phase>,
    changed: Condvar,
}

impl Shared {
    fn get(&self) -> Phase {
        *self.phase.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, to: Phase) {
        let mut phase = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        *phase = to;
        self.changed.notify_all();
    }
}

/// The watcher thread of one child process.
pub struct ExitWatch {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// The command is traced, so its exit will be held.
    traced: bool,
}

impl ExitWatch {
    /// Starts watching our child `pid`; returns once it is traced (or
    /// tracing was refused, in which case its exit is not held).
    pub fn start(pid: libc::pid_t) -> ExitWatch {
        let shared = Arc::new(Shared {
            phase: Mutex::new(Phase::Running),
            changed: Condvar::new(),
        });
        let (ready_tx, ready_rx) = mpsc::channel();
        let for_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("weft-child".into())
            .spawn(move || watch(pid, &for_thread, &ready_tx))
            .ok();
        // The thread answers before it waits; a closed channel means it ended.
        let traced = thread.is_some() && ready_rx.recv().unwrap_or(false);
        ExitWatch {
            shared,
            thread,
            traced,
        }
    }

    /// True if the watcher thread runs (otherwise the caller reaps the child).
    pub fn active(&self) -> bool {
        self.thread.is_some()
    }

    /// True if the command's exit will be held.
    #[cfg(test)]
    pub fn traced(&self) -> bool {
        self.traced
    }

    /// The command is stopped at its exit with its memory still mapped.
    pub fn at_exit(&self) -> bool {
        self.traced && self.shared.get() == Phase::AtExit
    }

    /// Lets a command held at its exit go on exiting; later exits are not held.
    pub fn let_exit(&self) {
        let mut phase = self.shared.phase.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(*phase, Phase::Running | Phase::AtExit) {
            *phase = Phase::Released;
            self.shared.changed.notify_all();
        }
    }

    /// True once the command has exited and was reaped.
    pub fn exited(&self) -> bool {
        self.shared.get() == Phase::Exited
    }

    /// Waits for the watcher thread (after the command was told to exit).
    pub fn join(&mut self) {
        self.let_exit();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The watcher thread: trace, pass signals on, hold the exit, reap.
fn watch(pid: libc::pid_t, shared: &Shared, ready: &mpsc::Sender<bool>) {
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
            shared.set(Phase::Exited);
            return;
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            shared.set(Phase::Exited);
            return;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        let (request, signal) = match stop_kind(status) {
            Stop::Exit => {
                hold(shared);
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

/// Waits at the exit stop until the run loop lets the command go.
fn hold(shared: &Shared) {
    let mut phase = shared.phase.lock().unwrap_or_else(|e| e.into_inner());
    if *phase != Phase::Running {
        return;
    }
    *phase = Phase::AtExit;
    shared.changed.notify_all();
    while *phase == Phase::AtExit {
        phase = shared
            .changed
            .wait(phase)
            .unwrap_or_else(|e| e.into_inner());
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
    fn holds_a_child_at_exit_until_let_go() {
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
        let mut watch = ExitWatch::start(pid);
        assert!(watch.active());
        if !watch.traced() {
            eprintln!("skipping the hold check: ptrace of a child is not permitted here");
        }
        // SAFETY: releasing the child through our pipe.
        unsafe {
            libc::write(fds[1], [1u8].as_ptr().cast(), 1);
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while watch.traced() && !watch.at_exit() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        if watch.traced() {
            assert!(watch.at_exit(), "the traced child was not held at its exit");
            // Held: its memory map is still readable.
            let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
            assert!(!maps.is_empty());
            assert!(!watch.exited());
            watch.let_exit();
        }
        watch.join();
        assert!(watch.exited());
    }
}
