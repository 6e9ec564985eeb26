//! `weft flamegraph`: draws folded stacks (or bpftrace's printed stack maps)
//! as a flame graph, or two of them as a differential one.
//!
//! ```text
//! weft flamegraph IN [-o OUT.svg] [--title T] [--unit U] [--offcpu]
//! weft flamegraph --diff BEFORE AFTER [-o OUT.svg] [--normalize]
//! ```

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::profile::svg::{Colors, SvgOptions};
use output::profile::{bpftrace_text, folded};

pub const USAGE: &str = "\
USAGE:
    weft flamegraph [options] IN [-o OUT.svg]
    weft flamegraph --diff BEFORE AFTER [-o OUT.svg] [--normalize]

IN is folded stacks (`frame;frame;frame COUNT` per line: `weft profile -o x.folded`,
bcc's `profile -f`, stackcollapse-*.pl) or bpftrace's printed stack maps
(`bpftrace -e 'profile:hz:99 { @[kstack, ustack, comm] = count(); }' > x.txt`).
`-` reads standard input.

OPTIONS:
    -o FILE          write the SVG to FILE (default: standard output)
    --diff A B       a differential flame graph from A (before) to B (after):
                     widths from B, red where a frame grew, blue where it shrank
    --normalize      with --diff, scale A to B's total first (runs of different length)
    --title TEXT     the title (default: Flame Graph, or Differential Flame Graph)
    --unit TEXT      what a count is (default: samples)
    --offcpu         blue palette, for off-CPU time
    -v               say where the time went (CPU: reading, converting, drawing, writing)
    -h, --help       print this help
";

#[derive(Debug)]
struct Args {
    inputs: Vec<PathBuf>,
    output: Option<PathBuf>,
    diff: bool,
    normalize: bool,
    title: Option<String>,
    unit: Option<String>,
    offcpu: bool,
    verbose: bool,
}

fn parse(args: &[OsString]) -> Result<Option<Args>, String> {
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            a.clone()
                .into_string()
                .map_err(|a| format!("argument {a:?} is not valid UTF-8"))
        })
        .collect::<Result<_, _>>()?;
    let mut out = Args {
        inputs: Vec::new(),
        output: None,
        diff: false,
        normalize: false,
        title: None,
        unit: None,
        offcpu: false,
        verbose: false,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let mut value = |flag: &str| -> Result<String, String> {
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("option {flag} needs a value (see weft flamegraph --help)"))
        };
        match arg {
            "-h" | "--help" => return Ok(None),
            "-o" => {
                let path = value("-o")?;
                if out.output.is_some() {
                    return Err(format!(
                        "-o given twice (`{path}`): weft flamegraph writes one file"
                    ));
                }
                out.output = Some(path.into());
            }
            "--title" => out.title = Some(value("--title")?),
            "--unit" => out.unit = Some(value("--unit")?),
            "--diff" => out.diff = true,
            "--normalize" => out.normalize = true,
            "--offcpu" => out.offcpu = true,
            "-v" => out.verbose = true,
            "-" => out.inputs.push(arg.into()),
            _ if arg.starts_with('-') => {
                return Err(format!(
                    "unknown option `{arg}` (see weft flamegraph --help)"
                ));
            }
            _ => out.inputs.push(arg.into()),
        }
        i += 1;
    }
    let wanted = if out.diff { 2 } else { 1 };
    if out.inputs.len() != wanted {
        return Err(if out.diff {
            "--diff needs two inputs: BEFORE AFTER".to_string()
        } else {
            "give one input file of folded stacks (or - for standard input)".to_string()
        });
    }
    if out.normalize && !out.diff {
        return Err("--normalize goes with --diff".to_string());
    }
    Ok(Some(out))
}

pub fn main(args: &[OsString]) -> ExitCode {
    let args = match parse(args) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("ERROR: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ERROR: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read_input(path: &Path) -> Result<String, String> {
    let bytes = if path.as_os_str() == "-" {
        let mut b = Vec::new();
        io::Read::read_to_end(&mut io::stdin().lock(), &mut b).map(|_| b)
    } else {
        std::fs::read(path)
    }
    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // Valid UTF-8 (the usual case) is taken as it is, without a copy.
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Folded text from either input format.
pub fn as_folded(text: String) -> String {
    if !is_bpftrace_output(&text) {
        return text;
    }
    let samples = bpftrace_text::parse(&text);
    let maps: std::collections::HashSet<&str> =
        samples.iter().filter_map(|s| s.map.as_deref()).collect();
    let opts = folded::FoldOptions {
        map_roots: maps.len() > 1,
        ..folded::FoldOptions::default()
    };
    let profile = output::profile::Profile {
        info: output::profile::ProfileInfo {
            kind: output::profile::ProfileKind::Values { counts: true },
            title: String::new(),
            command_line: String::new(),
            start_unix_ns: 0,
            duration_ns: 0,
        },
        samples,
    };
    let mut out = Vec::new();
    let _ = folded::write(&folded::fold(&profile, opts), &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// bpftrace's map printout has lines starting `@name[`; folded stacks never do.
fn is_bpftrace_output(text: &str) -> bool {
    text.lines().any(|l| {
        l.starts_with('@')
            && l.find('[').is_some_and(|i| {
                l[1..i]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
    })
}

fn run(args: &Args) -> Result<(), String> {
    let cpu = runtime::symbols::thread_cpu_time;
    let started = cpu();
    let raw: Vec<String> = args
        .inputs
        .iter()
        .map(|p| read_input(p))
        .collect::<Result<_, _>>()?;
    let read = cpu();
    let texts: Vec<String> = raw.into_iter().map(as_folded).collect();
    let converted = cpu();
    let opts = SvgOptions {
        title: args.title.clone().unwrap_or_else(|| {
            if args.diff {
                "Differential Flame Graph".to_string()
            } else {
                "Flame Graph".to_string()
            }
        }),
        // A diff says which file is which, and whether widths were scaled.
        subtitle: args.diff.then(|| {
            format!(
                "before: {}, after: {} (widths: after; colour: change{})",
                args.inputs[0].display(),
                args.inputs[1].display(),
                if args.normalize {
                    ", before normalized to the after total"
                } else {
                    ", not normalized"
                }
            )
        }),
        unit: args.unit.clone().unwrap_or_else(|| "samples".to_string()),
        colors: if args.offcpu {
            Colors::OffCpu
        } else {
            Colors::OnCpu
        },
    };
    let mut svg = Vec::new();
    let drawn = if args.diff {
        crate::profile::svg::write_diff_svg(
            texts[0].as_bytes(),
            texts[1].as_bytes(),
            args.normalize,
            &opts,
            &mut svg,
        )
    } else {
        crate::profile::svg::write_svg(texts[0].lines(), &opts, &mut svg)
    };
    let drawn_at = cpu();
    drawn.map_err(|e| match e {
        crate::profile::svg::SvgError::Empty => format!(
            "{} holds no stacks with counts (folded `a;b;c N` lines or bpftrace's `@[...]: N` stack maps)",
            args.inputs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        e => format!("drawing the flame graph: {e}"),
    })?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, &svg).map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
        None => io::stdout()
            .lock()
            .write_all(&svg)
            .map_err(|e| format!("writing the flame graph: {e}")),
    }?;
    if args.verbose {
        let ms = |a: std::time::Duration, b: std::time::Duration| {
            b.saturating_sub(a).as_secs_f64() * 1000.0
        };
        eprintln!(
            "weft: time (CPU): read {:.1} ms, convert {:.1} ms, draw {:.1} ms, write {:.1} ms; {} bytes of SVG",
            ms(started, read),
            ms(read, converted),
            ms(converted, drawn_at),
            ms(drawn_at, cpu()),
            svg.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Option<Args>, String> {
        parse(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn arguments() {
        let a = p(&["in.folded", "-o", "x.svg", "--title", "T"])
            .unwrap()
            .unwrap();
        assert_eq!(a.inputs, [PathBuf::from("in.folded")]);
        assert_eq!(a.output, Some(PathBuf::from("x.svg")));
        let d = p(&["--diff", "a", "b", "--normalize"]).unwrap().unwrap();
        assert!(d.diff && d.normalize);
        assert!(p(&["--diff", "a"]).unwrap_err().contains("two inputs"));
        assert!(p(&["a", "b"]).unwrap_err().contains("one input"));
        assert!(p(&["a", "--normalize"]).unwrap_err().contains("--diff"));
        assert!(
            p(&["a", "-o", "x.svg", "-o", "y.svg"])
                .unwrap_err()
                .contains("-o given twice")
        );
        assert!(p(&["--bogus", "a"]).unwrap_err().contains("unknown option"));
        assert!(p(&["-h"]).unwrap().is_none());
    }

    #[test]
    fn bpftrace_printouts_become_folded_lines() {
        let text = "Attaching 1 probe...\n\n\n@[\n    do_nanosleep+10\n    entry_SYSCALL_64_after_hwframe+118\n, weftwl]: 5\n";
        assert_eq!(
            as_folded(text.to_string()),
            "weftwl;entry_SYSCALL_64_after_hwframe_[k];do_nanosleep_[k] 5\n"
        );
        assert_eq!(as_folded("a;b 3\n".to_string()), "a;b 3\n");
        // Two maps: their names are the roots.
        let two = "@a[\n    f+1\n]: 2\n@b[\n    g+1\n]: 3\n";
        assert_eq!(as_folded(two.to_string()), "@a;f 2\n@b;g 3\n");
    }
}
