//! `weft-workload`: makes an exact number of system calls under the comm
//! `weftwl`, so kernel tests can count them and compare exactly.
//!
//! Usage: see [`USAGE`] (printed when run without steps or with `--help`).
//! Every step runs on the main thread, so pid == tid.

mod tools;

use std::ffi::CString;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const COMM: &[u8] = b"weftwl\0";

/// What `weft-workload` does and its steps; printed on `--help`, and on
/// stderr (exit 2) when run without steps or with an unknown one.
const USAGE: &str = "\
usage: weft-workload STEP [STEP ...]

Makes an exact number of system calls under the comm `weftwl`, one step
after another on the main thread (so pid == tid), for weft's kernel tests.

Steps:
  getppid N              N getppid() calls
  getppid-for MS         getppid() calls for MS milliseconds, as fast as it can,
                         then prints how many it made on stdout (soak benchmarks)
  getppid-threads T N    T threads at once (released together), each N getppid()
                         calls: the same probe on several CPUs at the same moment
  pipe-bursts N B        a writer thread writes N 8-byte messages (`m0000000`,
                         `m0000001`, ...) into a pipe in bursts of B, each burst
                         before a reader thread reads it back one message per read()
  openat PATH N          N openat(AT_FDCWD, PATH, O_RDONLY|O_CREAT) (+ close)
  write SIZE N           N write()s of SIZE bytes to /dev/null
  read SIZE N            N read()s of SIZE bytes from /dev/zero
  nanosleep NS N         N nanosleep()s of NS nanoseconds
  timed-nanosleep NS N PATH
                         the same, then writes to PATH each call's wall time in
                         nanoseconds (CLOCK_MONOTONIC, one a line): what off-CPU
                         time may reach, however long the wake-ups waited
  spin MS                busy-loop in `weft_workload_spin` for MS milliseconds
  spin-cpu MS            busy-loop in `weft_workload_spin_cpu` until the thread has
                         had MS milliseconds of CPU time (however loaded the machine
                         is, so profiles can count exact samples)
  jit-spin MS            spins MS milliseconds of CPU time in code it wrote to
                         anonymous memory, named `weft_jit_spin` in /tmp/perf-PID.map
                         (as a JIT runtime names its code; the file is left behind)
  pingpong N             two threads pass one byte back and forth over two pipes
                         N times: each blocks in read() until the other writes,
                         about 2N context switches (off-CPU benchmarks)
  call N                 N calls of `weft_workload_marker(i)` (for uprobes)
  strlen N               N calls of libc's `strlen` (an indirect function)
                         on \"weft workload strlen probe\" (26 bytes)
  sleep MS               one sleep of MS milliseconds (not counted)
  on-cpu CPU             run the following steps on CPU only (sched_setaffinity)
  touch-pages N          writes one byte to each of N fresh anonymous pages
                         (no huge pages): N page faults
  block-read             one read() from a pipe nobody writes: blocks until killed
  slow-read MS N         N read()s of one byte from a pipe, each answered by a
                         helper thread MS milliseconds after the read began
  dio-write PATH SIZE N  preallocates PATH (N*SIZE bytes, written and fsynced),
                         then N pwrite64()s of SIZE bytes with O_DIRECT
  fd-chain PATH N        N times: getppid(), a read() of the descriptor the
                         previous openat() returned (closed: EBADF), then
                         openat(PATH), a one-byte read(), close()
  thread-chain T N PATH  T threads at once, each N times: openat(PATH), a
                         one-byte read() into its own buffer, write() of that
                         buffer to its own /dev/null descriptor, close()
  serve PATH N           a server thread handles N requests a client sends over
                         a socket pair, each in `weft_workload_handle_request`:
                         read() it, write() it to PATH, fsync(), write() a reply
  tcp N                  a TCP connection over 127.0.0.1: the client sends N one-byte
                         segments (TCP_NODELAY), the server reads each, then closes
                         first; prints `tcp cookies client=C server=S` (SO_COOKIE):
                         the server's socket sees exactly N segments while established

Example: weft-workload getppid 1000 write 100 10
";

fn main() -> ExitCode {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, COMM.as_ptr()) };
    let args: Vec<String> = std::env::args().skip(1).collect();
    if matches!(args.first().map(String::as_str), Some("-h" | "--help")) {
        print!(
            "{USAGE}\nSteps that make bpftrace's tools fire:\n{}",
            tools::USAGE
        );
        return ExitCode::SUCCESS;
    }
    if args.is_empty() {
        eprint!(
            "{USAGE}\nSteps that make bpftrace's tools fire:\n{}",
            tools::USAGE
        );
        return ExitCode::from(2);
    }
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("weft-workload: {e}");
            ExitCode::from(2)
        }
    }
}

/// One `nanosleep()` of `ns` nanoseconds, the raw syscall (glibc's
/// nanosleep() uses clock_nanosleep).
fn nanosleep(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as _,
        tv_nsec: (ns % 1_000_000_000) as _,
    };
    // SAFETY: ts is a valid timespec; the remainder pointer may be null.
    unsafe {
        libc::syscall(
            libc::SYS_nanosleep,
            &ts,
            std::ptr::null_mut::<libc::timespec>(),
        )
    };
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
            "getppid-for" => {
                let ms = count(next("MS")?)?;
                let deadline = Instant::now() + Duration::from_millis(ms);
                let mut calls: u64 = 0;
                // The clock is read through the vDSO (no system call) once
                // per 1024 calls, so only getppid reaches the kernel.
                while Instant::now() < deadline {
                    for _ in 0..1024 {
                        // SAFETY: getppid has no arguments and cannot fail.
                        unsafe { libc::syscall(libc::SYS_getppid) };
                    }
                    calls += 1024;
                }
                println!("{calls}");
            }
            "getppid-threads" => {
                let threads = count(next("T")?)?;
                let n = count(next("N")?)?;
                getppid_threads(threads, n)?;
            }
            "pipe-bursts" => {
                let n = count(next("N")?)?;
                let burst = count(next("B")?)?.max(1);
                pipe_bursts(n, burst)?;
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
                for _ in 0..n {
                    nanosleep(ns);
                }
            }
            "timed-nanosleep" => {
                let ns = count(next("NS")?)?;
                let n = count(next("N")?)?;
                let path = next("PATH")?;
                // Instant reads CLOCK_MONOTONIC (bpf_ktime_get_ns's clock)
                // through the vDSO, so the steps make no other system call.
                let walls: Vec<u128> = (0..n)
                    .map(|_| {
                        let start = Instant::now();
                        nanosleep(ns);
                        start.elapsed().as_nanos()
                    })
                    .collect();
                let text: String = walls.iter().map(|w| format!("{w}\n")).collect();
                std::fs::write(path, text).map_err(|e| format!("{path}: {e}"))?;
            }
            "spin" => {
                let ms = count(next("MS")?)?;
                std::hint::black_box(weft_workload_spin(ms));
            }
            "spin-cpu" => {
                let ms = count(next("MS")?)?;
                std::hint::black_box(weft_workload_spin_cpu(ms));
            }
            "pingpong" => pingpong(count(next("N")?)?)?,
            "jit-spin" => jit_spin(count(next("MS")?)?)?,
            "call" => {
                let n = count(next("N")?)?;
                for i in 0..n {
                    std::hint::black_box(weft_workload_marker(std::hint::black_box(i)));
                }
            }
            "strlen" => {
                let n = count(next("N")?)?;
                let text = c"weft workload strlen probe";
                for _ in 0..n {
                    // SAFETY: text is NUL-terminated; black_box keeps the call.
                    std::hint::black_box(unsafe {
                        libc::strlen(std::hint::black_box(text.as_ptr()))
                    });
                }
            }
            "sleep" => std::thread::sleep(Duration::from_millis(count(next("MS")?)?)),
            "on-cpu" => pin_to_cpu(count(next("CPU")?)? as usize)?,
            "touch-pages" => touch_pages(count(next("N")?)? as usize)?,
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
            "slow-read" => {
                let ms = count(next("MS")?)?;
                let n = count(next("N")?)?;
                slow_read(ms, n)?;
            }
            "fd-chain" => {
                let path = next("PATH")?.to_string();
                let n = count(next("N")?)?;
                fd_chain(&path, n)?;
            }
            "thread-chain" => {
                let threads = count(next("T")?)?;
                let n = count(next("N")?)?;
                let path = next("PATH")?.to_string();
                thread_chain(threads, n, &path)?;
            }
            "serve" => {
                let path = next("PATH")?.to_string();
                let n = count(next("N")?)?;
                serve(&path, n)?;
            }
            "tcp" => tcp(count(next("N")?)?)?,
            "dio-write" => {
                let path = next("PATH")?.to_string();
                let size = count(next("SIZE")?)? as usize;
                let n = count(next("N")?)?;
                dio_write(&path, size, n)?;
            }
            other => {
                let mut take = |what: &str| next(what).map(str::to_string);
                if let Some(done) = tools::run(other, &mut take) {
                    done?;
                    continue;
                }
                return Err(format!(
                    "unknown step `{other}` (`weft-workload --help` lists the steps)"
                ));
            }
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

/// Writes a countdown loop into anonymous executable memory, names it in
/// `/tmp/perf-PID.map` as a JIT runtime does, and runs it until the thread
/// has had `ms` ms of CPU time.
fn jit_spin(ms: u64) -> Result<(), String> {
    if !cfg!(target_arch = "x86_64") {
        return Err("jit-spin writes x86-64 code".into());
    }
    // mov rax, rdi; 1: dec rax; jnz 1b; ret
    const CODE: [u8; 9] = [0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3];
    // SAFETY: a fresh private anonymous mapping; checked below.
    let page = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if page == libc::MAP_FAILED {
        return Err("mmap failed".into());
    }
    // SAFETY: the page is ours, writable and larger than the code; then it
    // becomes executable (and no longer writable) before it runs.
    let spin: extern "C" fn(u64) -> u64 = unsafe {
        std::ptr::copy_nonoverlapping(CODE.as_ptr(), page.cast::<u8>(), CODE.len());
        if libc::mprotect(page, 4096, libc::PROT_READ | libc::PROT_EXEC) != 0 {
            return Err("mprotect failed".into());
        }
        std::mem::transmute::<*mut libc::c_void, extern "C" fn(u64) -> u64>(page)
    };
    let map = format!("/tmp/perf-{}.map", std::process::id());
    std::fs::write(
        &map,
        format!("{:x} {:x} weft_jit_spin\n", page as usize, CODE.len()),
    )
    .map_err(|e| format!("cannot write {map}: {e}"))?;
    let until = thread_cpu_ns() + ms * 1_000_000;
    while thread_cpu_ns() < until {
        std::hint::black_box(spin(std::hint::black_box(1_000_000)));
    }
    Ok(())
}

/// Two threads passing a byte back and forth `n` times over two pipes.
/// Moves the workload onto one CPU, so a test knows which CPU each
/// following event fires on (per-CPU maps).
fn pin_to_cpu(cpu: usize) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 is this thread; `set` is valid for its size.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } != 0 {
        return Err(format!("on-cpu {cpu}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

fn pingpong(n: u64) -> Result<(), String> {
    let pipe = || {
        let mut fds = [0; 2];
        // SAFETY: fds has room for two descriptors.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            return Err("pipe failed".to_string());
        }
        Ok(fds)
    };
    let (ping, pong) = (pipe()?, pipe()?);
    let pass = |from: i32, to: i32| {
        let mut b = [0u8; 1];
        // SAFETY: b is valid for one byte; the descriptors are our pipes'.
        unsafe {
            libc::read(from, b.as_mut_ptr().cast(), 1) == 1
                && libc::write(to, b.as_ptr().cast(), 1) == 1
        }
    };
    let other = std::thread::spawn(move || {
        for _ in 0..n {
            if !pass(ping[0], pong[1]) {
                break;
            }
        }
    });
    for _ in 0..n {
        // SAFETY: writing one byte from a valid buffer to our pipe.
        if unsafe { libc::write(ping[1], [1u8].as_ptr().cast(), 1) } != 1 {
            return Err("write failed".into());
        }
        let mut b = [0u8; 1];
        // SAFETY: b is valid for one byte.
        if unsafe { libc::read(pong[0], b.as_mut_ptr().cast(), 1) } != 1 {
            return Err("read failed".into());
        }
    }
    other
        .join()
        .map_err(|_| "the other thread panicked".to_string())
}

/// CPU time this thread has used, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Spins until this thread has run `ms` ms on a CPU. The work is an inner
/// loop of plain instructions in this function (no calls), so a sample
/// taken while it spins has this function as its innermost frame; the CPU
/// clock is read about every millisecond.
#[inline(never)]
#[unsafe(no_mangle)]
pub extern "C" fn weft_workload_spin_cpu(ms: u64) -> u64 {
    let until = thread_cpu_ns() + ms * 1_000_000;
    let mut x = 0u64;
    while thread_cpu_ns() < until {
        let mut n: u64 = 1_000_000;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a register-only countdown loop.
        unsafe {
            std::arch::asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) n, options(nomem, nostack));
        }
        #[cfg(not(target_arch = "x86_64"))]
        while n > 0 {
            n = std::hint::black_box(n - 1);
        }
        x = x.wrapping_add(n + 1);
    }
    x
}

/// A user function with a stable symbol for uprobe benchmarks and tests.
#[inline(never)]
#[unsafe(no_mangle)]
pub extern "C" fn weft_workload_marker(i: u64) -> u64 {
    i.wrapping_mul(2654435761)
}

/// Maps `n` fresh anonymous pages and writes one byte to each: `n` minor faults.
fn touch_pages(n: usize) -> Result<(), String> {
    if n == 0 {
        return Ok(());
    }
    // SAFETY: sysconf has no memory effects.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let len = n * page;
    // SAFETY: a new private anonymous mapping; nothing else refers to it.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err("mmap failed".into());
    }
    // SAFETY: base..base+len is the mapping made above.
    unsafe {
        libc::madvise(base, len, libc::MADV_NOHUGEPAGE);
        for i in 0..n {
            std::ptr::write_volatile(base.cast::<u8>().add(i * page), 1);
        }
        libc::munmap(base, len);
    }
    Ok(())
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

/// Writes one byte to `path` so reads of it return one.
fn one_byte_file(path: &str) -> Result<CString, String> {
    std::fs::write(path, b"x").map_err(|e| format!("cannot write {path}: {e}"))?;
    CString::new(path).map_err(|e| e.to_string())
}

/// `n` times: getppid(), a read of the previous (closed) descriptor, then
/// openat, a one-byte read, close: a descriptor reused by each round.
fn fd_chain(path: &str, n: u64) -> Result<(), String> {
    let c = one_byte_file(path)?;
    // SAFETY: c is NUL-terminated; the descriptor is ours.
    let mut previous = unsafe { libc::openat(libc::AT_FDCWD, c.as_ptr(), libc::O_RDONLY) };
    if previous < 0 {
        return Err(format!("cannot open {path}"));
    }
    // SAFETY: previous is ours.
    unsafe { libc::close(previous) };
    let mut b = [0u8; 1];
    for _ in 0..n {
        // SAFETY: getppid cannot fail; reading a closed descriptor fails
        // with EBADF; c is NUL-terminated; fd is ours; b holds one byte.
        unsafe {
            libc::syscall(libc::SYS_getppid);
            libc::read(previous, b.as_mut_ptr().cast(), 1);
            let fd = libc::openat(libc::AT_FDCWD, c.as_ptr(), libc::O_RDONLY);
            if fd < 0 {
                return Err(format!("cannot open {path}"));
            }
            libc::read(fd, b.as_mut_ptr().cast(), 1);
            libc::close(fd);
            previous = fd;
        }
    }
    Ok(())
}

/// `threads` threads started together, each `n` times: openat(path), a
/// one-byte read into its own buffer, a write of that buffer to its own
/// /dev/null descriptor, close.
/// `pipe-bursts N B`: a writer thread writes B messages of 8 bytes, then a
/// reader thread reads them one read() each, in turns (handed over by
/// channels, which make no read or write calls), until N are written.
fn pipe_bursts(n: u64, burst: u64) -> Result<(), String> {
    use std::sync::mpsc::channel;
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err("pipe() failed".into());
    }
    let [read_fd, write_fd] = fds;
    let (to_reader, reader_turn) = channel::<u64>();
    let (to_writer, writer_turn) = channel::<()>();
    let reader = std::thread::spawn(move || -> Result<(), String> {
        let mut buf = [0u8; 8];
        while let Ok(count) = reader_turn.recv() {
            for _ in 0..count {
                // SAFETY: buf holds 8 bytes; read_fd is ours.
                let got = unsafe { libc::read(read_fd, buf.as_mut_ptr().cast(), 8) };
                if got != 8 {
                    return Err(format!("pipe read returned {got}"));
                }
            }
            let _ = to_writer.send(());
        }
        Ok(())
    });
    let mut sent = 0;
    while sent < n {
        let count = burst.min(n - sent);
        for i in sent..sent + count {
            let msg = format!("m{i:07}");
            // SAFETY: msg holds 8 bytes; write_fd is ours.
            let put = unsafe { libc::write(write_fd, msg.as_ptr().cast(), 8) };
            if put != 8 {
                return Err(format!("pipe write returned {put}"));
            }
        }
        sent += count;
        to_reader.send(count).map_err(|e| e.to_string())?;
        writer_turn.recv().map_err(|e| e.to_string())?;
    }
    drop(to_reader);
    reader
        .join()
        .map_err(|_| "the pipe reader panicked".to_string())??;
    // SAFETY: both descriptors are ours.
    unsafe {
        libc::close(read_fd);
        libc::close(write_fd);
    }
    Ok(())
}

/// `getppid-threads T N`: T threads released by one barrier, each making
/// N getppid() calls, so that a probe runs on every CPU at once.
fn getppid_threads(threads: u64, n: u64) -> Result<(), String> {
    let start = std::sync::Arc::new(std::sync::Barrier::new(threads as usize));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..n {
                    // SAFETY: getppid has no arguments and cannot fail.
                    unsafe { libc::syscall(libc::SYS_getppid) };
                }
            })
        })
        .collect();
    for w in workers {
        w.join()
            .map_err(|_| "a getppid thread panicked".to_string())?;
    }
    Ok(())
}

fn thread_chain(threads: u64, n: u64, path: &str) -> Result<(), String> {
    let c = one_byte_file(path)?;
    let start = std::sync::Arc::new(std::sync::Barrier::new(threads as usize));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let (c, start) = (c.clone(), start.clone());
            std::thread::spawn(move || -> Result<(), String> {
                let null = open("/dev/null", libc::O_WRONLY)?;
                let mut buf = vec![0u8; 64];
                start.wait();
                for _ in 0..n {
                    // SAFETY: c is NUL-terminated; fd and null are ours; buf
                    // holds 64 bytes.
                    unsafe {
                        let fd = libc::openat(libc::AT_FDCWD, c.as_ptr(), libc::O_RDONLY);
                        if fd < 0 {
                            return Err("cannot open the chain's file".into());
                        }
                        libc::read(fd, buf.as_mut_ptr().cast(), 1);
                        libc::write(null, buf.as_ptr().cast(), 1);
                        libc::close(fd);
                    }
                }
                // SAFETY: null is ours.
                unsafe { libc::close(null) };
                Ok(())
            })
        })
        .collect();
    for w in workers {
        w.join()
            .map_err(|_| "a chain thread panicked".to_string())??;
    }
    Ok(())
}

/// A request handler with a stable symbol for uprobes: reads one request
/// from `conn`, appends it to `file` and syncs it, then replies. Returns
/// the request's size.
#[inline(never)]
#[unsafe(no_mangle)]
pub extern "C" fn weft_workload_handle_request(conn: i32, file: i32) -> i64 {
    let mut request = [0u8; 256];
    // SAFETY: the buffers are valid for their lengths; the descriptors are
    // the caller's.
    unsafe {
        let n = libc::read(conn, request.as_mut_ptr().cast(), request.len());
        if n <= 0 {
            return -1;
        }
        libc::write(file, request.as_ptr().cast(), n as usize);
        libc::fsync(file);
        libc::write(conn, b"done\n".as_ptr().cast(), 5);
        n as i64
    }
}

/// A server thread handling `n` requests, each sent by the client (this
/// thread) over a socket pair and answered before the next.
/// `tcp N`: see [`USAGE`]. One thread does both ends, so the segments are
/// ordered; the server closes first so that no segment reaches its socket
/// after the data (the client's FIN finds it in FIN_WAIT, not established).
fn tcp(n: u64) -> Result<(), String> {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    let e = |what: &'static str| move |err: std::io::Error| format!("tcp: {what}: {err}");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(e("bind"))?;
    let addr = listener.local_addr().map_err(e("local_addr"))?;
    let mut client = std::net::TcpStream::connect(addr).map_err(e("connect"))?;
    client.set_nodelay(true).map_err(e("TCP_NODELAY"))?;
    let (mut server, _) = listener.accept().map_err(e("accept"))?;
    let cookie = |fd: i32| -> Result<u64, String> {
        let mut value = 0u64;
        let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
        // SAFETY: value and len are valid for getsockopt to write.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_COOKIE,
                (&mut value as *mut u64).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(format!(
                "tcp: SO_COOKIE: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(value)
    };
    let (c, s) = (cookie(client.as_raw_fd())?, cookie(server.as_raw_fd())?);
    let mut byte = [0u8; 1];
    for _ in 0..n {
        client.write_all(b"x").map_err(e("write"))?;
        server.read_exact(&mut byte).map_err(e("read"))?;
    }
    drop(server);
    drop(client);
    println!("tcp cookies client={c} server={s}");
    Ok(())
}

fn serve(path: &str, n: u64) -> Result<(), String> {
    let file = {
        let c = CString::new(path).map_err(|e| e.to_string())?;
        // SAFETY: c is NUL-terminated.
        unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
                0o644,
            )
        }
    };
    if file < 0 {
        return Err(format!("cannot write {path}"));
    }
    let mut pair = [0; 2];
    // SAFETY: pair has room for two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, pair.as_mut_ptr()) } != 0 {
        return Err("socketpair failed".into());
    }
    let (client, server) = (pair[0], pair[1]);
    let handler = std::thread::spawn(move || {
        for _ in 0..n {
            std::hint::black_box(weft_workload_handle_request(server, file));
        }
    });
    let mut reply = [0u8; 16];
    for i in 0..n {
        let request = format!("request {i}\n");
        // SAFETY: the buffers are valid for their lengths; client is ours.
        unsafe {
            libc::write(client, request.as_ptr().cast(), request.len());
            libc::read(client, reply.as_mut_ptr().cast(), reply.len());
        }
    }
    handler
        .join()
        .map_err(|_| "the server thread panicked".to_string())?;
    // SAFETY: the descriptors are ours.
    unsafe {
        libc::close(client);
        libc::close(server);
        libc::close(file);
    }
    Ok(())
}

/// `n` one-byte reads from a pipe that a helper thread writes to `ms`
/// milliseconds after each read began (the reads run on the main thread).
fn slow_read(ms: u64, n: u64) -> Result<(), String> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err("pipe failed".into());
    }
    let (read_end, write_end) = (fds[0], fds[1]);
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        while wait.recv().is_ok() {
            std::thread::sleep(Duration::from_millis(ms));
            // SAFETY: one byte from a static buffer to our pipe.
            unsafe { libc::write(write_end, b"x".as_ptr().cast(), 1) };
        }
    });
    let mut b = [0u8; 1];
    for _ in 0..n {
        go.send(()).map_err(|e| e.to_string())?;
        // SAFETY: b is valid for one byte; the helper writes one.
        unsafe { libc::read(read_end, b.as_mut_ptr().cast(), 1) };
    }
    drop(go);
    let _ = writer.join();
    // SAFETY: both ends are ours.
    unsafe {
        libc::close(read_end);
        libc::close(write_end);
    }
    Ok(())
}

/// Preallocates `path` so the measured writes change no metadata, then makes
/// `n` O_DIRECT `pwrite64`s of `size` bytes (each one block request).
fn dio_write(path: &str, size: usize, n: u64) -> Result<(), String> {
    let c = CString::new(path).map_err(|e| e.to_string())?;
    let total = size * n as usize;
    {
        let zeros = vec![0u8; total];
        std::fs::write(path, &zeros).map_err(|e| format!("cannot write {path}: {e}"))?;
        let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
        f.sync_all().map_err(|e| e.to_string())?;
    }
    // SAFETY: c is NUL-terminated.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_WRONLY | libc::O_DIRECT) };
    if fd < 0 {
        return Err(format!(
            "cannot open {path} with O_DIRECT: {}",
            std::io::Error::last_os_error()
        ));
    }
    let mut buf: *mut libc::c_void = std::ptr::null_mut();
    // SAFETY: buf receives an allocation of `size` bytes aligned to 4096.
    if unsafe { libc::posix_memalign(&mut buf, 4096, size) } != 0 {
        return Err("posix_memalign failed".into());
    }
    // SAFETY: buf points to `size` writable bytes.
    unsafe { std::ptr::write_bytes(buf.cast::<u8>(), b'w', size) };
    let mut result = Ok(());
    for i in 0..n {
        // SAFETY: buf is valid for size bytes; fd is ours.
        let written = unsafe { libc::pwrite(fd, buf, size, (i as usize * size) as libc::off_t) };
        if written != size as isize {
            result = Err(format!(
                "O_DIRECT pwrite failed: {}",
                std::io::Error::last_os_error()
            ));
            break;
        }
    }
    // SAFETY: buf came from posix_memalign; fd is ours.
    unsafe {
        libc::free(buf);
        libc::close(fd);
    }
    result
}
