//! `weft-workload`: makes an exact number of system calls under the comm
//! `weftwl`, so kernel tests can count them and compare exactly.
//!
//! Usage: `weft-workload STEP [STEP ...]` where each step is one of
//!   getppid N              N getppid() calls
//!   openat PATH N          N openat(AT_FDCWD, PATH, O_RDONLY|O_CREAT) (+ close)
//!   write SIZE N           N write()s of SIZE bytes to /dev/null
//!   read SIZE N            N read()s of SIZE bytes from /dev/zero
//!   nanosleep NS N         N nanosleep()s of NS nanoseconds
//!   spin MS                busy-loop in `weft_workload_spin` for MS milliseconds
//!   sleep MS               one sleep of MS milliseconds (not counted)
//!   block-read             one read() from a pipe nobody writes: blocks until killed
//! Every step runs on the main thread, so pid == tid.

use std::ffi::CString;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const COMM: &[u8] = b"weftwl\0";

fn main() -> ExitCode {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, COMM.as_ptr()) };
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("weft-workload: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let mut it = args.iter().map(String::as_str);
    while let Some(step) = it.next() {
        let mut next = |what: &str| it.next().ok_or(format!("{step}: missing {what}"));
        match step {
            "getppid" => {
                let n = count(next("N")?)?;
                for _ in 0..n {
                    // SAFETY: getppid has no arguments and cannot fail.
                    unsafe { libc::syscall(libc::SYS_getppid) };
                }
            }
            "openat" => {
                let path = CString::new(next("PATH")?).map_err(|e| e.to_string())?;
                let n = count(next("N")?)?;
                for _ in 0..n {
                    // SAFETY: path is NUL-terminated and outlives the call.
                    let fd = unsafe {
                        libc::openat(
                            libc::AT_FDCWD,
                            path.as_ptr(),
                            libc::O_RDONLY | libc::O_CREAT,
                            0o644,
                        )
                    };
                    if fd >= 0 {
                        // SAFETY: fd was just opened by us.
                        unsafe { libc::close(fd) };
                    }
                }
            }
            "write" => {
                let size = count(next("SIZE")?)? as usize;
                let n = count(next("N")?)?;
                let fd = open("/dev/null", libc::O_WRONLY)?;
                let buf = vec![b'x'; size];
                for _ in 0..n {
                    // SAFETY: buf is valid for size bytes.
                    unsafe { libc::write(fd, buf.as_ptr().cast(), size) };
                }
                // SAFETY: fd is ours.
                unsafe { libc::close(fd) };
            }
            "read" => {
                let size = count(next("SIZE")?)? as usize;
                let n = count(next("N")?)?;
                let fd = open("/dev/zero", libc::O_RDONLY)?;
                let mut buf = vec![0u8; size];
                for _ in 0..n {
                    // SAFETY: buf is valid for size bytes.
                    unsafe { libc::read(fd, buf.as_mut_ptr().cast(), size) };
                }
                // SAFETY: fd is ours.
                unsafe { libc::close(fd) };
            }
            "nanosleep" => {
                let ns = count(next("NS")?)?;
                let n = count(next("N")?)?;
                let ts = libc::timespec {
                    tv_sec: (ns / 1_000_000_000) as _,
                    tv_nsec: (ns % 1_000_000_000) as _,
                };
                for _ in 0..n {
                    // The raw syscall: glibc's nanosleep() uses clock_nanosleep.
                    // SAFETY: ts is a valid timespec; the remainder pointer may be null.
                    unsafe {
                        libc::syscall(
                            libc::SYS_nanosleep,
                            &ts,
                            std::ptr::null_mut::<libc::timespec>(),
                        )
                    };
                }
            }
            "spin" => {
                let ms = count(next("MS")?)?;
                std::hint::black_box(weft_workload_spin(ms));
            }
            "sleep" => std::thread::sleep(Duration::from_millis(count(next("MS")?)?)),
            "block-read" => {
                let mut fds = [0; 2];
                // SAFETY: fds has room for two descriptors.
                if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                    return Err("pipe failed".into());
                }
                let mut b = [0u8; 1];
                // SAFETY: b is valid for one byte; the write end stays open so this blocks.
                unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) };
            }
            other => return Err(format!("unknown step `{other}`")),
        }
    }
    Ok(())
}

#[inline(never)]
#[unsafe(no_mangle)]
pub extern "C" fn weft_workload_spin(ms: u64) -> u64 {
    let d = Duration::from_millis(ms);
    let start = Instant::now();
    let mut x = 0u64;
    while start.elapsed() < d {
        for i in 0..1000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }
    x
}

fn count(s: &str) -> Result<u64, String> {
    s.replace('_', "")
        .parse()
        .map_err(|_| format!("`{s}` is not a count"))
}

fn open(path: &str, flags: i32) -> Result<i32, String> {
    let c = CString::new(path).map_err(|e| e.to_string())?;
    // SAFETY: c is NUL-terminated.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        Err(format!("cannot open {path}"))
    } else {
        Ok(fd)
    }
}
