//! Writes a profile in the format its file's extension names, or folded
//! stacks to standard output.

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use runtime::symbols::thread_cpu_time;

use crate::profile::svg::{Colors, SvgError, SvgOptions};
use output::profile::{Profile, ProfileKind, folded, pprof};

use super::args::OutputKind;

#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// `comm-PID` in folded stacks.
    pub pid_frames: bool,
    /// Map names as root frames (a script with several stack maps).
    pub map_roots: bool,
}

fn fold_options(opts: WriteOptions) -> folded::FoldOptions {
    folded::FoldOptions {
        annotate: true,
        map_roots: opts.map_roots,
        pids: opts.pid_frames,
    }
}

/// The CPU time of writing a profile (`weft profile -v`).
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteTimes {
    /// Stacks folded to lines and merged (pprof: its messages built).
    pub folding: Duration,
    /// Formatting and writing the file (an SVG drawn, gzip).
    pub writing: Duration,
}

/// The SVG's subtitle: the command line, then the rate, how long it ran
/// and what it counted (`weft profile -F 99 -d 10: 99 Hz, 10.00 s, 1970 samples`).
pub fn subtitle(profile: &Profile) -> String {
    let secs = profile.info.duration_ns as f64 / 1e9;
    let total = profile.total();
    let facts = match profile.info.kind {
        ProfileKind::OnCpu { period_ns } => format!(
            "{} Hz, {secs:.2} s, {total} samples",
            1_000_000_000 / period_ns.max(1)
        ),
        ProfileKind::OffCpu => format!("{secs:.2} s, {:.3} s blocked in all", total as f64 / 1e6),
        ProfileKind::Values { .. } if profile.info.duration_ns > 0 => {
            format!("{secs:.2} s, {total} in all")
        }
        ProfileKind::Values { .. } => format!("{total} in all"),
    };
    format!("{}: {facts}", profile.info.command_line)
}

/// Writes `profile` to `path` by its extension (folded text to standard
/// output without one); returns the path written and the CPU time each
/// part took. The error is a sentence.
pub fn write(
    profile: &Profile,
    path: Option<&Path>,
    opts: WriteOptions,
) -> Result<(Option<String>, WriteTimes), String> {
    let started = thread_cpu_time();
    let mut times = WriteTimes::default();
    let fold = |times: &mut WriteTimes| {
        let lines = folded::fold(profile, fold_options(opts));
        times.folding = thread_cpu_time().saturating_sub(started);
        lines
    };
    let Some(path) = path else {
        let stdout = io::stdout();
        let mut out = BufWriter::new(stdout.lock());
        folded::write(&fold(&mut times), &mut out)
            .and_then(|()| out.flush())
            .or_else(|e| {
                // `weft profile | head` closes the pipe: not an error.
                if e.kind() == io::ErrorKind::BrokenPipe {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .map_err(|e| format!("writing folded stacks: {e}"))?;
        times.writing = thread_cpu_time().saturating_sub(started + times.folding);
        return Ok((None, times));
    };
    let kind = OutputKind::of(path)?;
    let shown = path.display().to_string();
    let file = std::fs::File::create(path).map_err(|e| format!("cannot write {shown}: {e}"))?;
    let mut out = BufWriter::with_capacity(256 * 1024, file);
    let written = match kind {
        OutputKind::Folded => folded::write(&fold(&mut times), &mut out),
        OutputKind::Pprof => {
            let proto = pprof::to_proto(profile);
            times.folding = thread_cpu_time().saturating_sub(started);
            pprof::write_proto_gz(&proto, &mut out)
        }
        OutputKind::Svg => {
            let lines = fold(&mut times);
            let text: Vec<String> = lines.iter().map(|(s, n)| format!("{s} {n}")).collect();
            let svg = SvgOptions {
                title: profile.info.title.clone(),
                subtitle: Some(subtitle(profile)),
                unit: profile.info.unit().to_string(),
                colors: match profile.info.kind {
                    ProfileKind::OffCpu => Colors::OffCpu,
                    _ => Colors::OnCpu,
                },
            };
            match crate::profile::svg::write_svg(text.iter().map(String::as_str), &svg, &mut out) {
                Ok(()) => Ok(()),
                Err(SvgError::Io(e)) => Err(e),
                Err(SvgError::Empty) => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "no stacks with a count to draw",
                )),
            }
        }
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write {shown}: {e}"))?;
    times.writing = thread_cpu_time().saturating_sub(started + times.folding);
    Ok((Some(shown), times))
}
