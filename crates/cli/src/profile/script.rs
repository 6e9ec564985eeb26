//! `weft --flamegraph FILE SCRIPT` and `--folded FILE`: a script's
//! stack-keyed `count()`/`sum()` maps, written as a profile at exit, so
//! `profile:hz:99 { @[kstack, ustack, comm] = count(); }` draws in one step.
//! Several such maps go into one file, each under its name as the root frame.

use std::path::Path;

use abi::{Attach, Manifest, MapSpec};
use output::profile::{Profile, ProfileInfo, ProfileKind, ProfileSample};

use super::svg::{Colors, SvgError, SvgOptions};
use super::write::WriteOptions;

/// The maps a profile can be made of.
fn profile_maps(manifest: &Manifest) -> Vec<&MapSpec> {
    let roles = super::sink::script_roles();
    manifest
        .maps
        .iter()
        .filter(|m| roles(m).is_some())
        .collect()
}

/// Fails (before anything runs) when the script has no map to draw.
pub fn check(manifest: &Manifest) -> Result<(), String> {
    if profile_maps(manifest).is_empty() {
        return Err(
            "ERROR: --flamegraph and --folded need a map keyed by kstack and/or ustack \
                    (with optional comm, pid or tid keys) whose value is count() or sum(), e.g. \
                    `profile:hz:99 { @[kstack, ustack, comm] = count(); }`"
                .to_string(),
        );
    }
    Ok(())
}

/// The unit a map's weight is in, guessed from the script: `count()` counts
/// samples; a sum named `…_us`, `…_ns`, `…_ms` is time.
fn unit(manifest: &Manifest) -> String {
    let maps = profile_maps(manifest);
    if maps
        .iter()
        .all(|m| matches!(m.value, abi::MapValue::Agg(abi::Aggregation::Count)))
    {
        return "samples".to_string();
    }
    for suffix in ["us", "ns", "ms"] {
        if maps.iter().all(|m| m.name.ends_with(suffix)) {
            return suffix.to_string();
        }
    }
    "units".to_string()
}

/// Writes the profile files asked for. The error is a sentence.
pub fn write(
    flamegraph: Option<&Path>,
    folded: Option<&Path>,
    samples: Vec<ProfileSample>,
    maps: &[String],
    manifest: &Manifest,
    command_line: &str,
) -> Result<(), String> {
    let switch = manifest.programs.iter().any(|p| match &p.attach {
        Attach::RawTracepoint { name } => name == "sched_switch",
        Attach::Tracepoint { name, .. } => name == "sched_switch",
        _ => false,
    });
    let counts = unit(manifest) == "samples";
    let profile = Profile {
        info: ProfileInfo {
            kind: ProfileKind::Values { counts },
            title: "Flame Graph".to_string(),
            command_line: command_line.to_string(),
            start_unix_ns: 0,
            duration_ns: 0,
        },
        samples,
    };
    if profile.total() == 0 {
        return Err(format!(
            "weft: no profile written: {} held no stacks with a count at exit",
            maps.join(", ")
        ));
    }
    let opts = WriteOptions {
        pid_frames: false,
        map_roots: maps.len() > 1,
    };
    let lines = output::profile::folded::fold(
        &profile,
        output::profile::folded::FoldOptions {
            annotate: true,
            map_roots: opts.map_roots,
            pids: false,
        },
    );
    if let Some(path) = folded {
        let mut text = Vec::new();
        let _ = output::profile::folded::write(&lines, &mut text);
        std::fs::write(path, text)
            .map_err(|e| format!("ERROR: cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = flamegraph {
        let svg = SvgOptions {
            title: profile.info.title.clone(),
            subtitle: Some(command_line.to_string()),
            unit: unit(manifest),
            colors: if switch {
                Colors::OffCpu
            } else {
                Colors::OnCpu
            },
        };
        let text: Vec<String> = lines.iter().map(|(s, n)| format!("{s} {n}")).collect();
        let mut out = Vec::new();
        super::svg::write_svg(text.iter().map(String::as_str), &svg, &mut out).map_err(
            |e| match e {
                SvgError::Empty => "weft: no flame graph written: no stacks".to_string(),
                SvgError::Io(e) => format!("ERROR: drawing the flame graph: {e}"),
            },
        )?;
        std::fs::write(path, out)
            .map_err(|e| format!("ERROR: cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
