//! `-c CMD`: the command is forked first and held before `exec` until the
//! probes are attached, so its pid can be compiled in as `cpid` and none of
//! its events are missed. (`std::process::Command::spawn` waits for `exec`,
//! so the hold needs a plain fork.) A command that cannot run is refused
//! before anything is compiled or attached, as bpftrace does; an `exec` that
//! still fails is reported when the command is released.

pub mod exit_watch;

use std::ffi::CString;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub struct HeldChild {
    pid: libc::pid_t,
    /// Write end of the pipe the child waits on; `None` once released.
    go: Option<libc::c_int>,
    /// Read end of a close-on-exec pipe: end of file once `exec` succeeded,
    /// the `errno` of a failed `exec` otherwise; `None` once read.
    exec_result: Option<libc::c_int>,
    exited: bool,
    /// Keeps the command's memory map at its exit and reaps it (see
    /// `child_exit`), when the script needs its symbols after it ends.
    watch: Option<exit_watch::ExitWatch>,
    /// Readable once the command has exited, when it is not watched.
    pidfd: Option<std::os::fd::OwnedFd>,
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
        let Some(program) = command.split_whitespace().next() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "-c needs a command",
            ));
        };
        let search_path = std::env::var_os("PATH").unwrap_or_default();
        find_program(program, &search_path)?;
        let mut argv: Vec<*const libc::c_char> = words.iter().map(|w| w.as_ptr()).collect();
        argv.push(std::ptr::null());
        let (go_read, go_write) = pipe()?;
        let (result_read, result_write) = match pipe() {
            Ok(fds) => fds,
            Err(e) => {
                close_all(&[go_read, go_write]);
                return Err(e);
            }
        };
        // SAFETY: between fork and exec the child only calls async-signal-safe
        // functions (close, read, write, execvp, _exit) on memory prepared
        // before the fork.
        let pid = unsafe { libc::fork() };
        match pid {
            -1 => {
                let e = io::Error::last_os_error();
                close_all(&[go_read, go_write, result_read, result_write]);
                Err(e)
            }
            0 => unsafe {
                libc::close(go_write);
                libc::close(result_read);
                let mut b = 0u8;
                if libc::read(go_read, (&raw mut b).cast(), 1) != 1 {
                    // weft gave up before attaching: do not run the command.
                    libc::_exit(127);
                }
                libc::execvp(argv[0], argv.as_ptr());
                // Still here: tell weft why (the pipe closes on a successful exec).
                let errno = *libc::__errno_location();
                libc::write(result_write, (&raw const errno).cast(), 4);
                libc::_exit(127);
            },
            child => {
                close_all(&[go_read, result_write]);
                Ok(HeldChild {
                    pid: child,
                    go: Some(go_write),
                    exec_result: Some(result_read),
                    exited: false,
                    watch: None,
                    pidfd: None,
                })
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// Lets the command `exec`, and waits until it has (an error if the
    /// `exec` failed). With `exit_maps`, its memory map is kept there as it
    /// exits (for its user stacks and symbols; it waits only for that);
    /// otherwise it runs untraced.
    pub fn release(&mut self, exit_maps: Option<crate::symbols::ExitMaps>) -> io::Result<()> {
        if self.go.is_some() {
            match exit_maps {
                Some(maps) => self.watch = Some(exit_watch::ExitWatch::start(self.pid, maps)),
                None => self.pidfd = pidfd_open(self.pid),
            }
        }
        if let Some(fd) = self.go.take() {
            // SAFETY: fd is our pipe's write end; closing it after the write.
            let n = unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
            let e = io::Error::last_os_error();
            unsafe { libc::close(fd) };
            if n != 1 {
                return Err(e);
            }
        }
        if let Some(fd) = self.exec_result.take() {
            let mut errno = [0u8; 4];
            let n = loop {
                // SAFETY: reading into a 4-byte buffer from our pipe's read end.
                let n = unsafe { libc::read(fd, errno.as_mut_ptr().cast(), 4) };
                if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                    break n;
                }
            };
            // SAFETY: closing our own descriptor.
            unsafe { libc::close(fd) };
            if n == 4 {
                return Err(exec_error(i32::from_ne_bytes(errno)));
            }
        }
        Ok(())
    }

    /// Readable once the command has exited, for the run loop to wait on.
    pub fn wake_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        match &self.watch {
            Some(watch) => watch.wake_fd(),
            None => self.pidfd.as_ref().map(|fd| fd.as_fd()),
        }
    }

    /// True once the command has exited (and reaps it).
    pub fn exited(&mut self) -> bool {
        if let (false, Some(watch)) = (self.exited, self.watch.as_ref().filter(|w| w.active())) {
            self.exited = watch.exited();
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
        if let Some(fd) = self.exec_result.take() {
            // SAFETY: closing our own descriptor.
            unsafe { libc::close(fd) };
        }
        if self.watch.as_ref().is_some_and(|w| w.active()) {
            if !self.exited() {
                // SAFETY: signalling our own child; the watcher thread reaps it.
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
            }
            if let Some(watch) = self.watch.as_mut() {
                watch.join();
            }
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

/// Why `exec` failed, in words (the file itself was found before forking).
fn exec_error(errno: i32) -> io::Error {
    let e = io::Error::from_raw_os_error(errno);
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or_default();
    let why = match errno {
        libc::ENOENT => format!("exec failed ({text}): its interpreter or loader is missing"),
        _ => format!("exec failed: {text}"),
    };
    io::Error::new(e.kind(), why)
}

/// A descriptor that turns readable when process `pid` exits (None if the
/// kernel has no pidfds: the run loop then notices at its next poll interval).
fn pidfd_open(pid: libc::pid_t) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a non-negative result is a descriptor we now own.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// A close-on-exec pipe: `(read end, write end)`.
fn pipe() -> io::Result<(libc::c_int, libc::c_int)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((fds[0], fds[1]))
}

fn close_all(fds: &[libc::c_int]) {
    for &fd in fds {
        // SAFETY: closing descriptors we own.
        unsafe { libc::close(fd) };
    }
}

/// The file `execvp` runs for `program`: the path itself when it has a `/`,
/// otherwise the first executable file of that name in `search_path`
/// (`PATH`). The error says, in one phrase, why there is none.
fn find_program(program: &str, search_path: &std::ffi::OsStr) -> io::Result<PathBuf> {
    let refuse = |why: &str| Err(io::Error::new(io::ErrorKind::NotFound, why.to_string()));
    if program.contains('/') {
        let path = Path::new(program);
        return match std::fs::metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => refuse("no such file"),
            Err(e) => Err(e),
            Ok(m) if m.is_dir() => refuse("it is a directory"),
            Ok(m) if m.permissions().mode() & 0o111 == 0 => refuse("it is not executable"),
            Ok(_) => Ok(path.to_path_buf()),
        };
    }
    let found = std::env::split_paths(search_path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        });
    found.map_or_else(|| refuse("command not found (not in PATH)"), Ok)
}

/// Why a `-p PID` cannot be traced.
#[derive(Debug, PartialEq, Eq)]
pub enum NoProcess {
    /// Above the kernel's `pid_max` (or not a pid at all).
    OutOfRange,
    /// No process has that pid.
    Missing,
}

/// Whether process `pid` exists (it may not be ours to signal).
pub fn check_exists(pid: u32) -> Result<(), NoProcess> {
    let pid_max = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .unwrap_or(4_194_304);
    let (Ok(pid), true) = (libc::pid_t::try_from(pid), pid <= pid_max) else {
        return Err(NoProcess::OutOfRange);
    };
    // SAFETY: signal 0 only checks that the process exists.
    if pid > 0 && unsafe { libc::kill(pid, 0) } == 0 {
        return Ok(());
    }
    match io::Error::last_os_error().raw_os_error() {
        Some(libc::EPERM) if pid > 0 => Ok(()),
        _ => Err(NoProcess::Missing),
    }
}

/// Sends SIGINT to `child` (not yet reaped), as a terminal's Ctrl-C would.
pub fn interrupt(child: &std::process::Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill() of our own child, not yet reaped (the Child holds it).
        unsafe { libc::kill(pid, libc::SIGINT) };
    }
}

/// Notices when the `-p` process ends, zombies included (a pidfd turns
/// readable at exit; `kill(pid, 0)` would still succeed on a zombie).
pub struct ProcessWatch {
    pid: u32,
    pidfd: Option<std::os::fd::OwnedFd>,
}

impl ProcessWatch {
    pub fn new(pid: u32) -> ProcessWatch {
        ProcessWatch {
            pid,
            pidfd: libc::pid_t::try_from(pid).ok().and_then(pidfd_open),
        }
    }

    /// Readable once the process has exited (None without pidfds).
    pub fn wake_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.pidfd.as_ref().map(|fd| fd.as_fd())
    }

    pub fn exited(&self) -> bool {
        match &self.pidfd {
            Some(fd) => {
                use std::os::fd::AsFd;
                crate::host::wait_readable(fd.as_fd(), std::time::Duration::ZERO)
            }
            // SAFETY: signal 0 only checks that the process exists.
            None => unsafe { libc::kill(self.pid as i32, 0) != 0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::find_program;
    use std::ffi::OsStr;

    fn why(program: &str, path: &str) -> String {
        find_program(program, OsStr::new(path))
            .map(|p| p.display().to_string())
            .unwrap_or_else(|e| e.to_string())
    }

    #[test]
    fn commands_are_found_like_execvp_finds_them() {
        assert_eq!(why("sh", "/nonexistent:/bin:/usr/bin"), "/bin/sh");
        assert_eq!(why("/bin/sh", ""), "/bin/sh");
        assert_eq!(
            why("nosuchcmd", "/bin:/usr/bin"),
            "command not found (not in PATH)"
        );
        assert_eq!(why("/no/such/cmd", "/bin"), "no such file");
        assert_eq!(why("/etc/passwd", "/bin"), "it is not executable");
        assert_eq!(why("/tmp", "/bin"), "it is a directory");
        // A directory in PATH with the command's name is not the command.
        assert_eq!(why("tmp", "/"), "command not found (not in PATH)");
    }
}
