//! `--mode bench`: each `bench:NAME` probe, in the script's order, run
//! again and again by `BPF_PROG_TEST_RUN` until one timed round lasts a
//! millisecond, then its mean time per run as the kernel measured it
//! (bpftrace's benchmark table, or one `benchmark_result` record in JSON).
//!
//! What the probes write while they are timed (printf, print, ...) is
//! thrown away, as bpftrace does: a benchmark measures, it does not report.
//! A probe that returns non-zero asks to be skipped and gets no line.

use std::ops::ControlFlow;
use std::time::Duration;

use abi::{Attach, CounterIndex};
use output::Sink;
use runtime::Session;

use crate::run_error::RunError;

/// A round shorter than this runs again with more repetitions.
const ENOUGH: Duration = Duration::from_millis(1);

/// The most repetitions one round asks for (the kernel's count is 32 bits).
const MAX_REPEAT: u64 = 1 << 30;

/// Times every bench probe and writes its result to `sink`. Returns the
/// ring-buffer records lost while benchmarking (the output thrown away
/// anyway), so that they are not reported as lost events.
pub fn run(session: &mut Session, sink: &mut dyn Sink) -> Result<u64, RunError> {
    let names: Vec<String> = session
        .manifest()
        .programs
        .iter()
        .filter_map(|p| match &p.attach {
            Attach::Bench { name } => Some(name.clone()),
            _ => None,
        })
        .collect();
    let lost_before = session.counters()?[CounterIndex::RingbufFull as usize];
    for (index, name) in names.iter().enumerate() {
        let mut repeat: u64 = 1;
        loop {
            let run = session.run_bench(name, repeat as u32)?;
            discard_output(session)?;
            if run.retval != 0 {
                break;
            }
            let total = Duration::from_nanos(run.mean_ns.saturating_mul(repeat));
            if total >= ENOUGH || repeat >= MAX_REPEAT {
                sink.benchmark(&names, index, run.mean_ns, repeat)
                    .map_err(RunError::Output)?;
                sink.flush().map_err(RunError::Output)?;
                break;
            }
            repeat = (repeat * next_factor(total)).min(MAX_REPEAT);
        }
    }
    let lost_after = session.counters()?[CounterIndex::RingbufFull as usize];
    Ok(lost_after - lost_before)
}

/// How much to multiply the repetitions by after a round of `total`: by a
/// lot while the round is far too short to time, by 2 near the goal.
fn next_factor(total: Duration) -> u64 {
    if total < Duration::from_micros(1) {
        1000
    } else if total < Duration::from_micros(10) {
        100
    } else if total < Duration::from_micros(100) {
        10
    } else {
        2
    }
}

/// Empties the ring buffer of what the timed runs wrote.
fn discard_output(session: &mut Session) -> Result<(), RunError> {
    while session.poll(Duration::ZERO, &mut |_| ControlFlow::Continue(()))? > 0 {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetitions_grow_fast_far_from_a_millisecond() {
        assert_eq!(next_factor(Duration::from_nanos(300)), 1000);
        assert_eq!(next_factor(Duration::from_micros(5)), 100);
        assert_eq!(next_factor(Duration::from_micros(50)), 10);
        assert_eq!(next_factor(Duration::from_micros(600)), 2);
    }
}
