//! Steps that make bpftrace's shipped tools fire (`/usr/sbin/*.bt`), each
//! with an exact, known effect: the kernel test of every tool runs one.

use std::ffi::CString;
use std::time::Duration;

/// The steps of this module and their usage lines.
pub const USAGE: &str = "\
  pid                    prints `weft-workload pid=PID` on stderr (tests match rows by it)
  spawn N                N fork+execve of `/bin/true weft-spawn I` (I = 1..N), each waited
  fork N                 N fork()s of a child that exits at once, each waited
  threads N              N threads (pthread_create), each joined before the next
  kill N                 N kill(own pid, 0)
  setuid N               N setuid(own uid)
  statx PATH N           N statx(AT_FDCWD, PATH)
  fsync PATH N           writes PATH, then N fsync()s of it
  sync                   one sync()
  getaddrinfo HOST N     N getaddrinfo(HOST) calls of libc
  readline N             bash on a pseudo-terminal reads N lines `: weft readline I`
                         with readline, then `exit`
";

/// Runs step `step` if it is one of this module's; `None` if it is not.
pub fn run(
    step: &str,
    next: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Option<Result<(), String>> {
    let result = match step {
        "pid" => {
            eprintln!("weft-workload pid={}", std::process::id());
            Ok(())
        }
        "spawn" => next("N").and_then(|n| count(&n)).and_then(spawn),
        "fork" => next("N").and_then(|n| count(&n)).and_then(fork),
        "threads" => next("N").and_then(|n| count(&n)).map(threads),
        "kill" => next("N").and_then(|n| count(&n)).map(kill),
        "setuid" => next("N").and_then(|n| count(&n)).map(setuid),
        "statx" => next("PATH")
            .and_then(|p| Ok((p, count(&next("N")?)?)))
            .and_then(|(p, n)| statx(&p, n)),
        "fsync" => next("PATH")
            .and_then(|p| Ok((p, count(&next("N")?)?)))
            .and_then(|(p, n)| fsync(&p, n)),
        "sync" => {
            // SAFETY: sync has no arguments and cannot fail.
            unsafe { libc::sync() };
            Ok(())
        }
        "getaddrinfo" => next("HOST")
            .and_then(|h| Ok((h, count(&next("N")?)?)))
            .and_then(|(h, n)| getaddrinfo(&h, n)),
        "readline" => next("N").and_then(|n| count(&n)).and_then(readline),
        _ => return None,
    };
    Some(result)
}

fn count(s: &str) -> Result<u64, String> {
    s.replace('_', "")
        .parse()
        .map_err(|_| format!("`{s}` is not a count"))
}

fn c_string(s: &str) -> Result<CString, String> {
    CString::new(s).map_err(|e| e.to_string())
}

/// Waits for child `pid`; an error unless it exited with 0.
fn wait(pid: libc::pid_t) -> Result<(), String> {
    let mut status = 0;
    // SAFETY: status is a valid out pointer; pid is our child.
    if unsafe { libc::waitpid(pid, &mut status, 0) } != pid {
        return Err("waitpid failed".into());
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else {
        Err(format!("child {pid} failed (status {status:#x})"))
    }
}

fn spawn(n: u64) -> Result<(), String> {
    let path = c_string("/bin/true")?;
    let marker = c_string("weft-spawn")?;
    for i in 1..=n {
        let index = c_string(&i.to_string())?;
        let argv = [
            path.as_ptr(),
            marker.as_ptr(),
            index.as_ptr(),
            std::ptr::null(),
        ];
        let envp = [std::ptr::null()];
        // SAFETY: the child only calls execve and _exit (async-signal-safe).
        let pid = unsafe { libc::fork() };
        match pid {
            -1 => return Err("fork failed".into()),
            0 => {
                // SAFETY: argv and envp are NULL-terminated arrays of C strings.
                unsafe {
                    libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
                    libc::_exit(127);
                }
            }
            child => wait(child)?,
        }
    }
    Ok(())
}

fn fork(n: u64) -> Result<(), String> {
    for _ in 0..n {
        // SAFETY: the child only calls _exit.
        match unsafe { libc::fork() } {
            -1 => return Err("fork failed".into()),
            // SAFETY: _exit ends the child without running anything of the parent's.
            0 => unsafe { libc::_exit(0) },
            child => wait(child)?,
        }
    }
    Ok(())
}

fn threads(n: u64) {
    for i in 0..n {
        let t = std::thread::spawn(move || std::hint::black_box(i));
        let _ = t.join();
    }
}

fn kill(n: u64) {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    for _ in 0..n {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(me, 0) };
    }
}

fn setuid(n: u64) {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    for _ in 0..n {
        // SAFETY: setting the uid the process already has changes nothing.
        unsafe { libc::setuid(uid) };
    }
}

fn statx(path: &str, n: u64) -> Result<(), String> {
    let c = c_string(path)?;
    for _ in 0..n {
        // SAFETY: c is NUL-terminated; buf is a writable statx buffer.
        let mut buf: libc::statx = unsafe { std::mem::zeroed() };
        unsafe {
            libc::syscall(
                libc::SYS_statx,
                libc::AT_FDCWD,
                c.as_ptr(),
                0,
                libc::STATX_BASIC_STATS,
                &mut buf,
            )
        };
    }
    Ok(())
}

fn fsync(path: &str, n: u64) -> Result<(), String> {
    let f = std::fs::File::create(path).map_err(|e| format!("cannot create {path}: {e}"))?;
    use std::io::Write;
    (&f).write_all(b"weft").map_err(|e| e.to_string())?;
    for _ in 0..n {
        f.sync_all().map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn getaddrinfo(host: &str, n: u64) -> Result<(), String> {
    let c = c_string(host)?;
    for _ in 0..n {
        let mut res: *mut libc::addrinfo = std::ptr::null_mut();
        // SAFETY: c is NUL-terminated; res receives a list freed below.
        let rc =
            unsafe { libc::getaddrinfo(c.as_ptr(), std::ptr::null(), std::ptr::null(), &mut res) };
        if rc != 0 {
            return Err(format!("getaddrinfo({host}) failed: {rc}"));
        }
        // SAFETY: res came from a successful getaddrinfo.
        unsafe { libc::freeaddrinfo(res) };
    }
    Ok(())
}

/// Runs `bash --norc --noprofile -i` on a new pseudo-terminal and types N
/// lines and `exit` into it: interactive bash reads each with readline.
fn readline(n: u64) -> Result<(), String> {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: master and slave receive two descriptors; the other arguments may be null.
    if unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    } != 0
    {
        return Err("openpty failed".into());
    }
    let bash = c_string("/bin/bash")?;
    let args = [
        c_string("bash")?,
        c_string("--norc")?,
        c_string("--noprofile")?,
        c_string("-i")?,
    ];
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let term = c_string("TERM=dumb")?;
    let envp = [term.as_ptr(), std::ptr::null()];
    // SAFETY: the child only makes async-signal-safe calls before execve.
    let pid = unsafe { libc::fork() };
    if pid == -1 {
        return Err("fork failed".into());
    }
    if pid == 0 {
        // SAFETY: a new session whose controlling terminal is the slave.
        unsafe {
            libc::setsid();
            libc::ioctl(slave, libc::TIOCSCTTY, 0);
            for fd in 0..3 {
                libc::dup2(slave, fd);
            }
            libc::close(master);
            libc::execve(bash.as_ptr(), argv.as_ptr(), envp.as_ptr());
            libc::_exit(127);
        }
    }
    // SAFETY: the parent keeps only the master.
    unsafe { libc::close(slave) };
    // Drain what bash writes, so it never blocks on a full terminal.
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        // SAFETY: buf is valid for its length; master stays open until bash exits.
        while unsafe { libc::read(master, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
    });
    let mut input = String::new();
    for i in 1..=n {
        input.push_str(&format!(": weft readline {i}\n"));
    }
    input.push_str("exit\n");
    for line in input.split_inclusive('\n') {
        // One line at a time, as typed: readline returns each.
        std::thread::sleep(Duration::from_millis(50));
        // SAFETY: line is valid for its length.
        unsafe { libc::write(master, line.as_ptr().cast(), line.len()) };
    }
    let result = wait(pid);
    // SAFETY: bash is gone; closing the master ends the reader.
    unsafe { libc::close(master) };
    let _ = reader.join();
    result
}
