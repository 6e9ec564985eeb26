//! Running weft on a pseudo-terminal the test opens itself (`openpty`), for
//! what weft draws only on a terminal: the status line, profile progress.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{wait_with_timeout, weft};

/// What a redrawn line is drawn after: back to the start of the line, clear it.
pub const ERASE: &str = "\r\x1b[K";

/// Runs weft with stdout and stderr on a fresh pseudo-terminal of 200
/// columns (killed after 60 s): its exit status and everything the
/// terminal received, with its `\r\n` turned back into `\n`.
pub fn run_on_pty(args: &[&str]) -> (Option<i32>, String) {
    let (mut master, mut slave) = (0, 0);
    let size = libc::winsize {
        ws_row: 50,
        ws_col: 200,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty fills two descriptors; the name and termios may be null.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: fresh descriptors owned from here on.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut child = Command::new(weft())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    let reader = std::thread::spawn(move || {
        let mut file = std::fs::File::from(master);
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        // EIO once the last holder of the terminal's other side is gone.
        while let Ok(n) = file.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        all
    });
    let (status, timed_out) = wait_with_timeout(&mut child, Duration::from_secs(60));
    assert!(!timed_out, "weft timed out");
    let bytes = reader.join().unwrap();
    (
        status,
        String::from_utf8_lossy(&bytes).replace("\r\n", "\n"),
    )
}
