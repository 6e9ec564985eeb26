//! `-c CMD`: the command is forked first and held before `exec` until the
//! probes are attached, so its pid can be compiled in as `cpid` and none of
//! its events are missed. (`std::process::Command::spawn` waits for `exec`,
//! so the hold needs a plain fork.)

use std::ffi::CString;
use std::io;

pub struct HeldChild {
    pid: libc::pid_t,
    /// Write end of the pipe the child waits on; `None` once released.
    go: Option<libc::c_int>,
    exited: bool,
    /// Holds the command at its exit and reaps it (see `child_exit`).
    watch: crate::child_exit::ExitWatch,
}

impl HeldChild {
    /// Forks `command` (split on whitespace, no shell, as bpftrace does) and holds it.
    pub fn spawn(command: &str) -> io::Result<HeldChild> {
        let words: Vec<CString> = command
            .split_whitespace()
            .map(|w| {
                CString::new(w)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in command"))
            })
            .collect::<Result<_, _>>()?;
        if words.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "-c needs a command",
            ));
        }
        let mut argv: Vec<*const libc::c_char> = words.iter().map(|w| w.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut fds = [0; 2];
        // SAFETY: fds has room for two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let (read_fd, write_fd) = (fds[0], fds[1]);
        // SAFETY: between fork and exec the child only calls async-signal-safe
        // functions (close, read, execvp, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        match pid {
            -1 => {
                // SAFETY: closing our own descriptors.
                unsafe {
                    libc::close(read_fd);
                    libc::close(write_fd);
                }
                Err(io::Error::last_os_error())
            }
            0 => unsafe {
                libc::close(write_fd);
                let mut b = 0u8;
                if libc::read(read_fd, (&raw mut b).cast(), 1) != 1 {
                    // weft gave up before attaching: do not run the command.
                    libc::_exit(127);
                }
                libc::execvp(argv[0], argv.as_ptr());
                libc::_exit(127);
            },
            child => {
                // SAFETY: the read end belongs to the child now.
                unsafe { libc::close(read_fd) };
                Ok(HeldChild {
                    pid: child,
                    go: Some(write_fd),
                    exited: false,
                    watch: crate::child_exit::ExitWatch::start(child),
                })
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// Lets the command `exec`.
    pub fn release(&mut self) -> io::Result<()> {
        if let Some(fd) = self.go.take() {
            // SAFETY: fd is our pipe's write end; closing it after the write.
            let n = unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
            unsafe { libc::close(fd) };
            if n != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// The command is stopped at its exit, its memory still mapped, until
    /// [`HeldChild::let_exit`].
    pub fn at_exit(&self) -> bool {
        self.watch.at_exit()
    }

    /// Lets a command held at its exit finish exiting.
    pub fn let_exit(&self) {
        self.watch.let_exit();
    }

    /// True once the command has exited (and reaps it).
    pub fn exited(&mut self) -> bool {
        if !self.exited && self.watch.active() {
            self.exited = self.watch.exited();
        } else if !self.exited {
            let mut status = 0;
            // SAFETY: waiting on our own child without blocking.
            let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            self.exited = r == self.pid || r == -1;
        }
        self.exited
    }

    /// Ends a held or still running command (weft stops early) and reaps it.
    pub fn kill(&mut self) {
        if let Some(fd) = self.go.take() {
            // SAFETY: closing the pipe makes a held child exit without running.
            unsafe { libc::close(fd) };
        }
        self.watch.let_exit();
        if self.watch.active() {
            if !self.exited() {
                // SAFETY: signalling our own child; the watcher thread reaps it.
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
            }
            self.watch.join();
            self.exited = true;
        } else if !self.exited() {
            // SAFETY: signalling and reaping our own child.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                libc::waitpid(self.pid, std::ptr::null_mut(), 0);
            }
            self.exited = true;
        }
    }
}

impl Drop for HeldChild {
    fn drop(&mut self) {
        self.kill();
    }
}
