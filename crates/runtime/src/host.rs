//! Facts about this machine and waits on descriptors that the standard
//! library has no call for: the host name, a random seed, the terminal's
//! width, whether a descriptor is readable.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Duration;

/// This machine's name (`unknown` if it cannot be read).
pub fn name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Eight bytes from the kernel's random pool (`None` if it gives none).
pub fn random_u64() -> Option<u64> {
    let mut buf = [0u8; 8];
    // SAFETY: getrandom writes at most buf.len() bytes into buf.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    (n == 8).then(|| u64::from_le_bytes(buf))
}

/// The width in columns of the terminal on stderr (`None` when stderr is
/// no terminal or does not say).
pub fn terminal_columns() -> Option<usize> {
    // SAFETY: all-zero is a valid winsize to fill.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ fills `ws`, which is valid and writable.
    let r = unsafe { libc::ioctl(2, libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_col > 0).then_some(usize::from(ws.ws_col))
}

/// Waits up to `timeout` for `fd` to be readable (a listener: a connection
/// waiting); true if it is.
pub fn wait_readable(fd: BorrowedFd<'_>, timeout: Duration) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd, a bounded wait.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}
