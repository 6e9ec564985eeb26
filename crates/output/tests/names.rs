//! Numbers printed as names: `strerror()` as Linux's errno texts,
//! `signal_name()` as `strsignal`'s, with bpftrace's answers at the edges.

use output::names::{errno_text, signal_text};

#[test]
fn errno_texts_and_their_edges() {
    assert_eq!(errno_text(0), "Success");
    assert_eq!(errno_text(1), "Operation not permitted");
    assert_eq!(errno_text(-1), "Operation not permitted");
    assert_eq!(errno_text(11), "Try again (operation would block)");
    assert_eq!(errno_text(22), "Invalid argument");
    assert_eq!(errno_text(133), "Memory page has hardware error");
    // 41 and 58 are numbers no errno has.
    assert_eq!(errno_text(41), "Unknown error");
    assert_eq!(errno_text(134), "Unknown error");
    assert_eq!(errno_text(i64::MIN), "Unknown error");
}

#[test]
fn signal_texts_and_their_edges() {
    assert_eq!(signal_text(0), "Unknown signal 0");
    assert_eq!(signal_text(2), "Interrupt");
    assert_eq!(signal_text(31), "Bad system call");
    assert_eq!(signal_text(32), "Unknown signal 32");
    assert_eq!(signal_text(34), "Real-time signal 0");
    assert_eq!(signal_text(64), "Real-time signal 30");
    assert_eq!(signal_text(65), "N/A");
    assert_eq!(signal_text(-1), "N/A");
}
