//! Command-line arguments, bpftrace-compatible.

use std::ffi::OsString;
use std::path::PathBuf;

pub const USAGE: &str = "\
USAGE:
    weft [options] filename [arg ...]
    weft [options] -e 'program' [arg ...]
    weft [options] - [arg ...]      (the script from stdin)
    weft [options] -e 'program' -- [arg ...]   (arguments after -- are positional, even -x)
    weft profile | offcpu | flamegraph [options]   (see weft profile --help, ...)
    weft agent --config FILE        (several scripts, exported; see weft agent --help)

OPTIONS:
    -e PROGRAM        program text to run
    -c CMD            run CMD (probes attached first); the run ends when CMD exits; `cpid` is its pid
    -p PID            trace only this process (and enable probes that need a pid)
    --cgroup PATH     trace only tasks of this cgroup v2 cgroup (a directory under the
                      cgroup v2 mount, or its path there: /system.slice/cron.service)
    --cgroup-tree PATH  the same, with every cgroup below it (a container's whole tree)
    -l [PATTERN|FILE] list probes matching PATTERN (e.g. 'tracepoint:syscalls:*', 'struct task_struct'),
                      or the probes of a script (FILE, or -e 'program'); -lv adds arguments and
                      struct definitions; with -p PID, the process's uprobes and USDT probes too
    -f FORMAT         output format: text (default) or json
    -o, --output FILE write output to FILE instead of stdout
    --timeline FILE   also write stream records to FILE as a trace for ui.perfetto.dev or
                      chrome://tracing (written at exit)
    --prometheus ADDR serve the maps (read at each scrape), stream durations and weft's own
                      counters as Prometheus metrics at http://ADDR/metrics (ADDR: HOST:PORT or :PORT)
    --prometheus-max-series N
                      export at most N label sets per scrape, the heaviest (default 10000);
                      the rest are counted in weft_series_dropped
    --flamegraph FILE write the stack-keyed count()/sum() maps (kstack and/or ustack, with
                      optional comm, pid, tid keys) as a flame graph SVG at exit
    --folded FILE     the same as folded stacks (`comm;frame;frame COUNT`)
    --otlp URL        send each stream record as an OpenTelemetry span (OTLP/HTTP protobuf) to
                      the collector at URL (http://HOST:4318, or its /v1/traces URL)
    --otlp-batch N    send spans when N records wait (default 1024)...
    --otlp-interval DURATION
                      ...or when the oldest waited this long (default 2s)
    --otlp-queue N    records waiting at most; more are dropped and counted (default 16384)
    --otlp-metrics-interval DURATION
                      also send the maps as OTLP metrics this often (e.g. 10s)
    --stats           turn on the kernel's BPF run statistics for the run; at exit show each
                      probe's run count, run time and recursion misses, weft's own CPU time
                      and the overhead as a share of the machine's CPU (-f json: a stats record)
    --unsafe          allow what changes the system or risks the traced processes:
                      system(), signal(), override(), a uprobe where weft cannot check
                      that an instruction begins
    -k                report failed BPF helper calls, memory reads included, with their
                      script line: the first failure of each call as it happens, counts at exit
    -I DIR            look for #include'd headers in DIR first (repeatable)
    --include FILE    read FILE as if the script began with #include \"FILE\" (repeatable)
    --debuginfo DIR   look for user binaries' separate debug files (NAME.debug, by debug link or
                      build id) and split DWARF (.dwo, .dwp) in DIR too (repeatable)
    -q                quiet: no 'Attached N probes' line
    --no-warnings     print no warnings (errors still)
    --dry-run         compile, load and attach every probe, then detach and exit
    --probe-filter REGEX
                      attach only the probes whose full name matches REGEX (BEGIN and END always)
    --mode bench, --bench
                      run each bench:NAME probe repeatedly (BPF_PROG_TEST_RUN) and print its
                      mean time per run; bench probes are left out otherwise
    --usdt-file-activation
                      accepted for bpftrace's scripts: USDT semaphores are always raised by the
                      kernel in every process that maps the file while the probe is attached
    -v                verbose: show what weft does and the kernel's verifier log
    -d STAGE          dump a compiler stage and exit: ast, types, bpf or all
    --emit-elf FILE   write the compiled BPF ELF object to FILE and exit
    --info            print what this kernel supports, then exit
    -h, --help        print this help
    -V, --version     print the version

STREAMS:
    weft's extension to the language: `stream NAME { begin ... stage ... end ... }` declares
    a request's life cycle across probes and prints one record per request, with every
    stage's time. The reference (grammar, clauses, records, handlers, counters, examples)
    is docs/streams.md in weft's sources; examples are in examples/streams/.
";

pub const AGENT_USAGE: &str = "\
USAGE:
    weft agent --config FILE [-v]

Runs the scripts of FILE (see docs/fleet.md) in one process, exporting their maps and streams
(Prometheus /metrics and /healthz, OTLP). SIGHUP reloads FILE: changed scripts are swapped, the
others keep running; SIGINT or SIGTERM stops everything.

OPTIONS:
    --config FILE     the agent's configuration (TOML: [agent], [[script]], [profile])
    -v                say what is sent, even when nothing was lost
    -h, --help        print this help
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
}

pub use tracer::pipeline::DumpStage;

/// What the user asked for.
#[derive(Debug, Default)]
pub struct Args {
    /// `-e` text.
    pub program: Option<String>,
    /// Script file (first positional when no `-e`).
    pub script_file: Option<PathBuf>,
    /// Positional parameters `$1`, `$2`, ...
    pub positional: Vec<String>,
    /// Named parameters after `--` (`--name=value`, `--name`), for getopt().
    pub named: Vec<syntax::NamedParam>,
    pub command: Option<String>,
    pub pid: Option<u32>,
    /// `--cgroup PATH` / `--cgroup-tree PATH`: the path, and whether descendants count.
    pub cgroup: Option<(String, bool)>,
    /// `-l`: what to list.
    pub list: Option<ListTarget>,
    pub format: Option<OutputFormat>,
    pub output: Option<PathBuf>,
    /// `--timeline FILE`: stream records as a Chrome trace-event file.
    pub timeline: Option<PathBuf>,
    /// `--prometheus ADDR`: where to serve `/metrics`.
    pub prometheus: Option<std::net::SocketAddr>,
    /// `--prometheus-max-series N`.
    pub prometheus_max_series: Option<usize>,
    /// `--flamegraph FILE`: stack-keyed maps as a flame graph at exit.
    pub flamegraph: Option<PathBuf>,
    /// `--folded FILE`: stack-keyed maps as folded stacks at exit.
    pub folded: Option<PathBuf>,
    /// `--otlp URL` and its options.
    pub otlp: Option<export::otlp::OtlpOptions>,
    pub quiet: bool,
    /// `--no-warnings`.
    pub no_warnings: bool,
    /// `--dry-run`: attach, then detach and exit.
    pub dry_run: bool,
    /// `--probe-filter REGEX`, as written.
    pub probe_filter: Option<String>,
    /// `--mode bench` / `--bench`: run the bench probes.
    pub bench: bool,
    /// `--unsafe`: the user takes the risks weft otherwise refuses.
    pub unsafe_mode: bool,
    /// `-k` / `-kk`.
    pub helper_errors: abi::HelperErrors,
    /// `-I DIR` and `--include FILE`.
    pub includes: sema::Includes,
    /// `--debuginfo DIR` (repeatable): where user binaries' separate debug
    /// files and split DWARF (`.dwo`, `.dwp`) are looked for too.
    pub debuginfo: Vec<String>,
    pub verbose: bool,
    /// `--stats`: BPF run statistics and weft's own cost, reported at exit.
    pub stats: bool,
    pub dump: Option<DumpStage>,
    pub emit_elf: Option<PathBuf>,
    pub info: bool,
    pub help: bool,
    pub version: bool,
}

/// What `-l` lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListTarget {
    /// Probes matching a search (`*` when none was given).
    Search(String),
    /// The probes of the script (`-e` or the file given).
    Script,
}

/// Why the arguments cannot be used: one sentence, and whether the usage
/// text should follow it (an option weft does not know, a missing program).
#[derive(Debug, PartialEq, Eq)]
pub struct ArgError {
    pub message: String,
    pub show_usage: bool,
}

impl ArgError {
    fn plain(message: impl Into<String>) -> Self {
        ArgError {
            message: message.into(),
            show_usage: false,
        }
    }

    fn usage(message: impl Into<String>) -> Self {
        ArgError {
            message: message.into(),
            show_usage: true,
        }
    }
}

impl From<String> for ArgError {
    fn from(message: String) -> Self {
        ArgError::plain(message)
    }
}

impl From<&str> for ArgError {
    fn from(message: &str) -> Self {
        ArgError::plain(message)
    }
}

/// Options that take a value, long and short, as `parse` knows them
/// (`--output=FILE` and `-pPID` are split on these).
const VALUE_OPTIONS: &[&str] = &[
    "-e",
    "-c",
    "--cmd",
    "-p",
    "--pid",
    "--cgroup",
    "--cgroup-tree",
    "-o",
    "--output",
    "--timeline",
    "--prometheus",
    "--otlp",
    "--otlp-batch",
    "--otlp-queue",
    "--otlp-interval",
    "--otlp-metrics-interval",
    "--prometheus-max-series",
    "--flamegraph",
    "--folded",
    "-f",
    "-d",
    "--dump",
    "--emit-elf",
    "-I",
    "--include",
    "--debuginfo",
    "--probe-filter",
    "--mode",
];

/// Short options without a value, which may be written together (`-lv`, `-kk`).
const SHORT_FLAGS: &str = "lvqkhV";

/// Splits `--name=value` and `-xVALUE` into option and value, and
/// `-lv`-style clusters into single flags; other arguments stay as they are.
fn split_options(args: Vec<String>) -> Result<Vec<String>, ArgError> {
    let mut out = Vec::with_capacity(args.len());
    let mut rest = args.into_iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            out.push(arg);
            out.extend(rest.by_ref());
            break;
        }
        if let Some((name, value)) = arg.split_once('=')
            && name.starts_with("--")
            && VALUE_OPTIONS.contains(&name)
        {
            out.push(name.to_string());
            out.push(value.to_string());
            continue;
        }
        // The value of an option written apart (`-e PROGRAM`) is left as it is.
        let is_value = out
            .last()
            .is_some_and(|o: &String| VALUE_OPTIONS.contains(&o.as_str()));
        let short = arg.len() > 2 && arg.starts_with('-') && !arg.starts_with("--");
        if is_value || !short || is_number(&arg) || arg == "-kk" {
            out.push(arg);
            continue;
        }
        // As getopt reads a cluster: flags until one that takes a value,
        // which takes the rest (`-qp123` is `-q -p 123`).
        let chars = arg[1..].char_indices();
        for (at, c) in chars {
            let flag = format!("-{c}");
            if VALUE_OPTIONS.contains(&flag.as_str()) {
                out.push(flag);
                let value = &arg[1 + at + c.len_utf8()..];
                if !value.is_empty() {
                    out.push(value.to_string());
                }
                break;
            }
            if !SHORT_FLAGS.contains(c) {
                return Err(ArgError::usage(format!("unknown option `{arg}`")));
            }
            out.push(flag);
        }
    }
    Ok(out)
}

/// Parses arguments (without the program name). Errors are one sentence.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args, ArgError> {
    let args: Vec<String> = args
        .into_iter()
        .map(|a| {
            a.into_string()
                .map_err(|a| format!("argument {a:?} is not valid UTF-8"))
        })
        .collect::<Result<_, _>>()?;
    let args = split_options(args)?;
    let mut out = Args::default();
    // The --otlp-* settings, applied once --otlp is known.
    let mut otlp_settings: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    let mut positional = Vec::new();
    let mut listing = false;
    let mut after_dashes = Vec::new();
    let value = |i: &mut usize, flag: &str| -> Result<String, String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("option {flag} needs a value (see --help)"))
    };
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "-e" => out.program = Some(value(&mut i, "-e")?),
            "-c" | "--cmd" => out.command = Some(value(&mut i, arg)?),
            "-p" | "--pid" => out.pid = Some(parse_pid(&value(&mut i, arg)?)?),
            "--cgroup" | "--cgroup-tree" => {
                if out.cgroup.is_some() {
                    return Err("give one of --cgroup and --cgroup-tree, once".into());
                }
                out.cgroup = Some((value(&mut i, arg)?, arg == "--cgroup-tree"));
            }
            "-o" | "--output" => out.output = Some(value(&mut i, arg)?.into()),
            "--timeline" => out.timeline = Some(value(&mut i, "--timeline")?.into()),
            "--prometheus" => {
                let v = value(&mut i, "--prometheus")?;
                out.prometheus = Some(export::http::parse_listen_address(&v)?);
            }
            "--otlp" => {
                let v = value(&mut i, "--otlp")?;
                let url = export::http::Url::parse(&v).map_err(|e| format!("--otlp {e}"))?;
                out.otlp = Some(export::otlp::OtlpOptions::new(url));
            }
            "--otlp-batch" | "--otlp-queue" => {
                let v = value(&mut i, arg)?;
                let n: usize = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    format!("{arg} needs a positive number of records, not `{v}`")
                })?;
                otlp_settings.push((arg.to_string(), n.to_string()));
            }
            "--otlp-interval" | "--otlp-metrics-interval" => {
                let v = value(&mut i, arg)?;
                parse_duration(&v).ok_or_else(|| {
                    format!("{arg} needs a duration such as 500ms, 2s or 1m, not `{v}`")
                })?;
                otlp_settings.push((arg.to_string(), v));
            }
            "--prometheus-max-series" => {
                let v = value(&mut i, "--prometheus-max-series")?;
                out.prometheus_max_series = Some(v.parse().map_err(|_| {
                    format!("--prometheus-max-series needs a number of series, not `{v}`")
                })?);
            }
            "--flamegraph" => out.flamegraph = Some(value(&mut i, "--flamegraph")?.into()),
            "--folded" => out.folded = Some(value(&mut i, "--folded")?.into()),
            "-f" => {
                out.format = Some(match value(&mut i, "-f")?.as_str() {
                    "text" => OutputFormat::Text,
                    "json" => OutputFormat::Json,
                    other => {
                        return Err(format!("Invalid output format \"{other}\"").into());
                    }
                })
            }
            "-d" | "--dump" => {
                out.dump = Some(match value(&mut i, "-d")?.as_str() {
                    "ast" => DumpStage::Ast,
                    "types" => DumpStage::Types,
                    "bpf" | "dis" | "codegen" => DumpStage::Bpf,
                    "all" => DumpStage::All,
                    other => {
                        return Err(format!(
                            "unknown dump stage `{other}`: use ast, types, bpf or all"
                        )
                        .into());
                    }
                })
            }
            "--emit-elf" => out.emit_elf = Some(value(&mut i, "--emit-elf")?.into()),
            "-l" | "--list" => listing = true,
            "-q" | "--quiet" => out.quiet = true,
            "--no-warnings" => out.no_warnings = true,
            "--dry-run" => out.dry_run = true,
            "--probe-filter" => out.probe_filter = Some(value(&mut i, arg)?),
            "--mode" => match value(&mut i, arg)?.as_str() {
                "bench" => out.bench = true,
                other => {
                    return Err(format!(
                        "--mode {other}: weft has only --mode bench (bpftrace's test, codegen, compiler-bench and format modes are not in weft)"
                    )
                    .into());
                }
            },
            "--bench" => out.bench = true,
            "--usdt-file-activation" => {}
            "--unsafe" => out.unsafe_mode = true,
            // The current release's -k reports the memory reads too (0.23
            // folded -kk into it); -kk stays for 0.17's scripts.
            "-k" | "-kk" => out.helper_errors = abi::HelperErrors::WithReads,
            "-I" => out.includes.dirs.push(value(&mut i, "-I")?),
            "--include" => out.includes.files.push(value(&mut i, "--include")?),
            "--debuginfo" => out.debuginfo.push(value(&mut i, "--debuginfo")?),
            "--stats" => out.stats = true,
            "-v" | "--verbose" => out.verbose = true,
            "--info" => out.info = true,
            "-h" | "--help" => out.help = true,
            "-V" | "--version" => out.version = true,
            "--" => {
                after_dashes.extend(args[i + 1..].iter().cloned());
                break;
            }
            _ if arg.starts_with('-') && arg.len() > 1 && !is_number(arg) => {
                return Err(ArgError::usage(format!("unknown option `{arg}`")));
            }
            _ => positional.push(arg.to_string()),
        }
        i += 1;
    }
    if let Some((flag, _)) = otlp_settings.first()
        && out.otlp.is_none()
    {
        return Err(format!("{flag} goes with --otlp URL").into());
    }
    if let Some(otlp) = out.otlp.as_mut() {
        for (flag, v) in &otlp_settings {
            match flag.as_str() {
                "--otlp-batch" => otlp.batch = v.parse().unwrap_or(otlp.batch),
                "--otlp-queue" => otlp.queue = v.parse().unwrap_or(otlp.queue),
                "--otlp-interval" => otlp.interval = parse_duration(v).unwrap_or(otlp.interval),
                _ => otlp.metrics_interval = parse_duration(v).filter(|d| !d.is_zero()),
            }
        }
    }
    // After `--`: `--NAME[=VALUE]` is a named parameter (for getopt()), as
    // in bpftrace; anything else a positional one, whatever it looks like.
    for arg in after_dashes {
        match syntax::NamedParam::parse(&arg) {
            Some(named) => out.named.push(named),
            None => positional.push(arg),
        }
    }
    if listing {
        if positional.len() > 1 {
            return Err(ArgError::usage(
                "-l takes one search pattern or script file",
            ));
        }
        out.list = Some(match positional.pop() {
            // bpftrace's rule: an existing file is a script to list the probes of.
            Some(p) if std::path::Path::new(&p).is_file() => {
                out.script_file = Some(p.into());
                ListTarget::Script
            }
            Some(p) => ListTarget::Search(p),
            None if out.program.is_some() => ListTarget::Script,
            None => ListTarget::Search("*".into()),
        });
        return Ok(out);
    }
    if out.program.is_none() && !out.info && !out.help && !out.version {
        if positional.is_empty() {
            return Err(ArgError::usage(
                "no program given: use -e 'program' or a script file",
            ));
        }
        out.script_file = Some(positional.remove(0).into());
    }
    if out.command.is_some() && out.pid.is_some() {
        return Err(ArgError::usage("give -c or -p, not both"));
    }
    out.positional = positional;
    Ok(out)
}

/// `-p PID`: a number as bpftrace reads one (decimal, `0x`, `0b`, `0`
/// octal), refused in bpftrace's words; whether such a process exists is
/// checked before attaching.
fn parse_pid(text: &str) -> Result<u32, String> {
    if let Some(pid) = sema::parse_uint(text)
        .ok()
        .and_then(|p| u32::try_from(p).ok())
    {
        return Ok(pid);
    }
    let why = if text.starts_with(|c: char| c.is_ascii_digit()) {
        "invalid trailing bytes"
    } else {
        "invalid integer"
    };
    Err(format!("Failed to parse pid: {why}: {text}"))
}

/// `500ms`, `2s`, `1m`, or a number of seconds.
pub fn parse_duration(text: &str) -> Option<std::time::Duration> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let n: f64 = number.parse().ok()?;
    let seconds = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    };
    (seconds.is_finite() && seconds >= 0.0).then(|| std::time::Duration::from_secs_f64(seconds))
}

fn is_number(s: &str) -> bool {
    s[1..].chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Args, String> {
        parse(args.iter().map(OsString::from)).map_err(|e| e.message)
    }

    #[test]
    fn bpftraces_run_flags() {
        let a = p(&[
            "--dry-run",
            "--no-warnings",
            "--probe-filter=:200$",
            "--mode",
            "bench",
            "--output=out.txt",
            "-e",
            "x",
        ])
        .unwrap();
        assert!(a.dry_run && a.no_warnings && a.bench);
        assert_eq!(a.probe_filter.as_deref(), Some(":200$"));
        assert_eq!(a.output.unwrap().to_str(), Some("out.txt"));
        assert!(
            p(&["--mode", "test", "-e", "x"])
                .unwrap_err()
                .contains("--mode test")
        );
        // Short flags cluster; a value may follow its flag directly.
        let a = p(&["-qp123", "-e", "x"]).unwrap();
        assert!(a.quiet);
        assert_eq!(a.pid, Some(123));
        assert_eq!(p(&["-p", "0x10", "-e", "x"]).unwrap().pid, Some(16));
        assert!(
            p(&["-p", "1x", "-e", "x"])
                .unwrap_err()
                .contains("Failed to parse pid")
        );
        // After --, what looks like a flag is a positional parameter.
        let a = p(&["-e", "x", "--", "-v", "7"]).unwrap();
        assert_eq!(a.positional, ["-v", "7"]);
        assert!(!a.verbose);
        // ... but `--NAME[=VALUE]` is a named parameter, for getopt().
        let a = p(&["-e", "x", "--", "--name=1", "pos", "--flag"]).unwrap();
        assert_eq!(a.positional, ["pos"]);
        let named: Vec<(&str, Option<&str>)> = a
            .named
            .iter()
            .map(|n| (n.name.as_str(), n.value.as_deref()))
            .collect();
        assert_eq!(named, [("name", Some("1")), ("flag", None)]);
    }

    #[test]
    fn list_targets() {
        let a = p(&["-lv", "struct task_struct"]).unwrap();
        assert!(a.verbose);
        assert_eq!(
            a.list,
            Some(ListTarget::Search("struct task_struct".into()))
        );
        assert_eq!(
            p(&["-l"]).unwrap().list,
            Some(ListTarget::Search("*".into()))
        );
        assert_eq!(
            p(&["-l", "-e", "BEGIN {}"]).unwrap().list,
            Some(ListTarget::Script)
        );
        // An existing file is a script whose probes are listed.
        let a = p(&["-l", "Cargo.toml"]).unwrap();
        assert_eq!(a.list, Some(ListTarget::Script));
        assert_eq!(a.script_file.unwrap().to_str(), Some("Cargo.toml"));
    }

    #[test]
    fn usage_follows_an_unknown_flag_only() {
        let e = parse(["--bogus"].map(OsString::from)).unwrap_err();
        assert!(e.show_usage);
        let e = parse(["-e", "x", "-f", "xml"].map(OsString::from)).unwrap_err();
        assert!(!e.show_usage);
    }

    #[test]
    fn program_and_positionals() {
        let a = p(&["-q", "-e", "BEGIN {}", "x", "-5"]).unwrap();
        assert_eq!(a.program.as_deref(), Some("BEGIN {}"));
        assert_eq!(a.positional, ["x", "-5"]);
        assert!(a.quiet);
    }

    #[test]
    fn script_file_then_args() {
        let a = p(&["-f", "json", "s.bt", "1"]).unwrap();
        assert_eq!(a.script_file.unwrap().to_str(), Some("s.bt"));
        assert_eq!(a.positional, ["1"]);
        assert_eq!(a.format, Some(OutputFormat::Json));
    }

    #[test]
    fn list_with_and_without_pattern() {
        let a = p(&["-lv", "tracepoint:sched:*"]).unwrap();
        assert_eq!(
            a.list,
            Some(ListTarget::Search("tracepoint:sched:*".into()))
        );
        assert!(a.verbose);
    }

    #[test]
    fn timeline_file() {
        let a = p(&["--timeline", "t.json", "-e", "BEGIN {}"]).unwrap();
        assert_eq!(a.timeline.unwrap().to_str(), Some("t.json"));
        assert!(
            p(&["-e", "x", "--timeline"])
                .unwrap_err()
                .contains("needs a value")
        );
    }

    #[test]
    fn prometheus_address_and_limit() {
        let a = p(&[
            "--prometheus",
            ":9464",
            "--prometheus-max-series",
            "50",
            "-e",
            "x",
        ])
        .unwrap();
        assert_eq!(a.prometheus, Some("0.0.0.0:9464".parse().unwrap()));
        assert_eq!(a.prometheus_max_series, Some(50));
        assert!(
            p(&["--prometheus", "nowhere", "-e", "x"])
                .unwrap_err()
                .contains("HOST:PORT")
        );
        assert!(
            p(&["--prometheus-max-series", "many", "-e", "x"])
                .unwrap_err()
                .contains("number of series")
        );
    }

    #[test]
    fn profile_files() {
        let a = p(&["--flamegraph", "x.svg", "--folded", "x.folded", "s.bt"]).unwrap();
        assert_eq!(a.flamegraph.unwrap().to_str(), Some("x.svg"));
        assert_eq!(a.folded.unwrap().to_str(), Some("x.folded"));
        assert!(
            p(&["-e", "x", "--flamegraph"])
                .unwrap_err()
                .contains("needs a value")
        );
    }

    #[test]
    fn otlp_and_its_settings() {
        let a = p(&[
            "--otlp-batch",
            "10",
            "--otlp",
            "http://127.0.0.1:4318",
            "--otlp-metrics-interval",
            "500ms",
            "-e",
            "x",
        ])
        .unwrap();
        let o = a.otlp.unwrap();
        assert_eq!((o.url.port, o.batch), (4318, 10));
        assert_eq!(
            o.metrics_interval,
            Some(std::time::Duration::from_millis(500))
        );
        assert_eq!(o.interval, export::otlp::OtlpOptions::DEFAULT_INTERVAL);
        assert!(
            p(&["--otlp-batch", "5", "-e", "x"])
                .unwrap_err()
                .contains("goes with --otlp")
        );
        assert!(
            p(&["--otlp", "https://x", "-e", "x"])
                .unwrap_err()
                .contains("plain HTTP")
        );
        assert!(
            p(&["--otlp", "http://x", "--otlp-interval", "soon", "-e", "x"])
                .unwrap_err()
                .contains("duration")
        );
        assert_eq!(parse_duration("2"), Some(std::time::Duration::from_secs(2)));
        assert_eq!(
            parse_duration("1m"),
            Some(std::time::Duration::from_secs(60))
        );
        assert_eq!(
            parse_duration("1.5s"),
            Some(std::time::Duration::from_millis(1500))
        );
        assert_eq!(parse_duration("3 days"), None);
    }

    #[test]
    fn cgroup_filters() {
        let a = p(&["--cgroup", "/system.slice", "-e", "x"]).unwrap();
        assert_eq!(a.cgroup, Some(("/system.slice".into(), false)));
        let a = p(&["--cgroup-tree", "app", "-e", "x"]).unwrap();
        assert_eq!(a.cgroup, Some(("app".into(), true)));
        assert!(
            p(&["--cgroup", "a", "--cgroup-tree", "b", "-e", "x"])
                .unwrap_err()
                .contains("once")
        );
        assert!(
            p(&["-e", "x", "--cgroup"])
                .unwrap_err()
                .contains("needs a value")
        );
    }

    #[test]
    fn unsafe_checks_and_includes() {
        let a = p(&[
            "--unsafe",
            "-kk",
            "-I",
            "/a",
            "-I/b",
            "--include",
            "x.h",
            "-e",
            "x",
        ])
        .unwrap();
        assert!(a.unsafe_mode);
        assert_eq!(a.helper_errors, abi::HelperErrors::WithReads);
        assert_eq!(a.includes.dirs, ["/a", "/b"]);
        assert_eq!(a.includes.files, ["x.h"]);
        let a = p(&["-k", "-e", "x"]).unwrap();
        assert!(!a.unsafe_mode);
        assert_eq!(a.helper_errors, abi::HelperErrors::WithReads);
        // `-` is the script on stdin.
        let a = p(&["-", "1"]).unwrap();
        assert_eq!(a.script_file.unwrap().to_str(), Some("-"));
        assert_eq!(a.positional, ["1"]);
    }

    #[test]
    fn errors_are_sentences() {
        assert!(p(&[]).unwrap_err().contains("no program"));
        assert!(
            p(&["-p", "abc", "-e", "x"])
                .unwrap_err()
                .contains("Failed to parse pid")
        );
        assert!(p(&["--bogus"]).unwrap_err().contains("unknown option"));
        assert!(p(&["-e"]).unwrap_err().contains("needs a value"));
    }
}
