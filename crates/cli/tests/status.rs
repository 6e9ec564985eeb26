//! The live status line under a pseudo-terminal the test makes itself
//! (`openpty`): it is redrawn about once a second with new numbers, and it
//! never lands inside a line of output. (Lost events reported as they
//! happen: `kernel.rs`, `full_ring_buffer_drops_are_counted_exactly`.)

mod common;

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{wait_with_timeout, weft};

/// What the line is drawn after: back to the start of the line, clear it.
const ERASE: &str = "\r\x1b[K";

/// Runs weft with stdout and stderr on a fresh pseudo-terminal of 200
/// columns; everything the terminal received, with its `\r\n` turned back
/// into `\n`.
fn run_on_pty(args: &[&str]) -> String {
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
    assert_eq!(status, Some(0));
    let bytes = reader.join().unwrap();
    String::from_utf8_lossy(&bytes).replace("\r\n", "\n")
}

/// The terminal stream cut at each erase: the status lines drawn (pieces
/// that start with `weft `), and the output with them taken out. Panics if
/// a status line was drawn where the output had not ended a line.
fn split(screen: &str) -> (Vec<String>, String) {
    let mut statuses = Vec::new();
    let mut output = String::new();
    for (i, piece) in screen.split(ERASE).enumerate() {
        // After an erase, a status line runs to the next erase; what
        // follows it, if anything, is output.
        let is_status = i > 0 && piece.starts_with("weft ") && !piece.contains('\n');
        if is_status {
            assert!(
                output.is_empty() || output.ends_with('\n'),
                "a status line was drawn inside a line of output: {output:?} then {piece:?}"
            );
            statuses.push(piece.to_string());
        } else {
            output.push_str(piece);
        }
    }
    (statuses, output)
}

#[test]
fn the_status_line_updates_and_keeps_out_of_output_lines() {
    require_root!();
    let screen = run_on_pty(&[
        "-e",
        r#"interval:ms:200 { @ticks = count(); printf("tick\n"); } interval:s:4 { exit(); }"#,
    ]);
    let (statuses, output) = split(&screen);
    // The output is exactly what bpftrace prints: no status bytes in it.
    let ticks = output.lines().filter(|l| *l == "tick").count();
    assert!(ticks >= 15, "{output:?}");
    assert!(output.starts_with("Attached 2 probes\n"), "{output:?}");
    assert!(
        output.ends_with(&format!("\n\n@ticks: {ticks}\n")),
        "{output:?}"
    );
    // Redrawn about once a second, with what changed.
    assert!(statuses.len() >= 2, "{screen:?}");
    let distinct: std::collections::HashSet<&String> = statuses.iter().collect();
    assert!(distinct.len() >= 2, "{statuses:?}");
    for s in &statuses {
        assert!(
            s.contains(" events/s | lost 0 events, 0 map updates | "),
            "{s}"
        );
        assert!(
            s.contains("fullest @ticks") || s.contains("weft CPU"),
            "{s}"
        );
        assert!(s.len() < 200, "{s}");
    }
}

#[test]
fn a_line_being_written_holds_the_status_line() {
    require_root!();
    // Lines of `a`s are written a character at a time, ended once a
    // second: the status line may only come between them.
    let screen = run_on_pty(&[
        "-e",
        r#"interval:ms:50 { printf("a"); } interval:ms:700 { printf("\n"); } interval:s:4 { exit(); }"#,
    ]);
    let (_, output) = split(&screen);
    for line in output.lines().skip(1) {
        assert!(
            line.chars().all(|c| c == 'a'),
            "a line was split: {line:?}\n{screen:?}"
        );
    }
}

#[test]
fn quiet_has_no_status_line() {
    require_root!();
    let screen = run_on_pty(&[
        "-q",
        "-e",
        r#"interval:ms:200 { printf("tick\n"); } interval:s:3 { exit(); }"#,
    ]);
    assert!(!screen.contains(ERASE), "{screen:?}");
}
