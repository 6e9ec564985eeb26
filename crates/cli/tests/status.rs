//! The live status line under a pseudo-terminal the test makes itself
//! (`openpty`): it is redrawn about once a second with new numbers, and it
//! never lands inside a line of output. (Lost events reported as they
//! happen: `kernel.rs`, `full_ring_buffer_drops_are_counted_exactly`.)

mod common;

use common::pty::{ERASE, run_on_pty as run_on_pty_status};

/// Runs weft on a fresh pseudo-terminal, expecting success: what the
/// terminal received.
fn run_on_pty(args: &[&str]) -> String {
    let (status, screen) = run_on_pty_status(args);
    assert_eq!(status, Some(0), "{screen}");
    screen
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
