//! `weft`: parse arguments, run the compiler pipeline, load and run the
//! program, print what it gathered. Runtime errors get their help text at
//! this edge, in `run_error.rs`.

#![forbid(unsafe_code)]

mod agent;
mod args;
mod flamegraph_cmd;
mod info;
mod list;
mod profile;

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use args::{Args, OutputFormat};
use output::{JsonSink, Sink, TextSink};
use run_error::io_reason;
use runtime::SysKernelInfo;
use sema::CheckOptions;
use source::{SourceMap, render_all};
use tracer::{helper_errors, pipeline, run, run_error, status, streams};

fn main() -> ExitCode {
    let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some(code) = subcommand(&raw) {
        return code;
    }
    let args = match args::parse(raw) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ERROR: {}", e.message);
            if e.show_usage {
                eprint!("\n{}", args::USAGE);
            }
            return ExitCode::from(2);
        }
    };
    if args.help {
        print!("{}", args::USAGE);
        return ExitCode::SUCCESS;
    }
    if args.version {
        println!("weft {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    runtime::silence_libbpf();
    if args.info {
        print!("{}", info::render(&runtime::Features::probe()));
        return ExitCode::SUCCESS;
    }
    if let Some(target) = &args.list {
        return list::run(target, &args);
    }
    match trace(&args) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            if !message.is_empty() {
                eprint!("{message}");
                if !message.ends_with('\n') {
                    eprintln!();
                }
            }
            ExitCode::FAILURE
        }
    }
}

/// `weft flamegraph ...` and the other subcommands; `None` for a script run.
fn subcommand(raw: &[std::ffi::OsString]) -> Option<ExitCode> {
    let (first, rest) = raw.split_first()?;
    match first.to_str()? {
        "flamegraph" => Some(flamegraph_cmd::main(rest)),
        "profile" => Some(profile::main(profile::args::Mode::OnCpu, rest)),
        "offcpu" => Some(profile::main(profile::args::Mode::OffCpu, rest)),
        "agent" => Some(agent_command(rest.iter().cloned())),
        _ => None,
    }
}

/// `weft agent --config FILE [-v]`.
fn agent_command(args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    let args: Vec<std::ffi::OsString> = args.collect();
    let mut config = None;
    let mut verbose = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].to_str() {
            Some("--config" | "-c") if i + 1 < args.len() => {
                config = Some(std::path::PathBuf::from(&args[i + 1]));
                i += 1;
            }
            Some("-v") => verbose = true,
            Some("-h" | "--help") => {
                print!("{}", args::AGENT_USAGE);
                return ExitCode::SUCCESS;
            }
            _ => {
                eprintln!(
                    "ERROR: weft agent: unknown argument {:?} (see weft agent --help)",
                    args[i]
                );
                return ExitCode::from(2);
            }
        }
        i += 1;
    }
    let Some(config) = config else {
        eprintln!("ERROR: weft agent: --config FILE is needed (see weft agent --help)");
        return ExitCode::from(2);
    };
    runtime::silence_libbpf();
    agent::run(&config, verbose)
}

/// Compiles and runs a script: the status to exit with (the script's
/// `exit(code)`). The error is the text to print.
fn trace(args: &Args) -> Result<u8, String> {
    let mut sources = SourceMap::new();
    let file = read_script(args, &mut sources)?;
    let kernel = SysKernelInfo::with_debuginfo_dirs(args.debuginfo.clone());
    let emit_only = args.dump.is_some() || args.emit_elf.is_some();
    if let (Some(pid), false) = (args.pid, emit_only) {
        process_exists(pid).map_err(|e| format!("ERROR: {e}"))?;
    }

    // The command is forked (and held) first, so `cpid` can be compiled in.
    let mut child = match (&args.command, emit_only) {
        (Some(cmd), false) => Some(
            runtime::process::HeldChild::spawn(cmd)
                .map_err(|e| format!("ERROR: cannot run `{cmd}`: {e}"))?,
        ),
        _ => None,
    };
    let cgroup_filter = match &args.cgroup {
        Some((path, tree)) => {
            let flag = if *tree { "--cgroup-tree" } else { "--cgroup" };
            let target = ktypes::cgroup::resolve_cgroup(&kernel, path)
                .map_err(|e| format!("ERROR: {flag} {path}: {e}"))?;
            Some(abi::CgroupFilter {
                id: target.id,
                dir: target.dir,
                tree: *tree,
            })
        }
        None => None,
    };
    let opts = CheckOptions {
        positional: args.positional.clone(),
        named: args.named.clone(),
        cpid: child.as_ref().map(|c| c.pid()),
        pid_filter: args.pid,
        cgroup_filter,
        env: bpftrace_env(),
        unsafe_mode: args.unsafe_mode,
        includes: args.includes.clone(),
        probe_filter: args.probe_filter.as_deref().map(probe_filter).transpose()?,
        bench: args.bench,
    };
    let mut dumps = String::new();
    let started = std::time::Instant::now();
    let as_written = ktypes::AsWritten(&kernel);
    let compile_for: &dyn ktypes::KernelInfo = if emit_only { &as_written } else { &kernel };
    let result = pipeline::compile(
        &mut sources,
        file,
        compile_for,
        &opts,
        &codegen::Options {
            helper_errors: args.helper_errors,
            // A script of thousands of probes allocates registers on every CPU.
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            ..codegen::Options::default()
        },
        args.dump,
        &mut dumps,
    );
    print!("{dumps}");
    let mut out = match result {
        Ok(out) => out,
        Err(diags) => return Err(render_all(diags.iter(), &sources)),
    };
    check_named_params(&out.named, &args.named)?;
    if args.verbose {
        for note in &out.notes {
            eprintln!("{note}");
        }
        let instructions: usize = out
            .compiled
            .functions
            .iter()
            .map(|(_, f)| f.insns.len())
            .sum();
        eprintln!(
            "weft: compiled {} program(s), {instructions} instructions, {} map(s), a {}-byte object in {:.2} ms",
            out.compiled.functions.len(),
            out.compiled.manifest.maps.len(),
            out.compiled.elf.len(),
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    if !out.warnings.is_empty() && !args.no_warnings {
        eprint!("{}", render_all(out.warnings.iter(), &sources));
    }
    if let Some(path) = &args.emit_elf {
        std::fs::write(path, &out.compiled.elf)
            .map_err(|e| format!("ERROR: cannot write {}: {e}", path.display()))?;
    }
    if emit_only {
        // The process ends here: freeing a large script's parsed, checked
        // and compiled forms, allocation by allocation, would only add to
        // its compile time.
        std::mem::forget(out);
        std::mem::forget(sources);
        return Ok(0);
    }
    out.front = None;

    runtime::signals::install();
    // Listening comes first: a port in use stops the run before anything loads.
    let targets = std::sync::Arc::new(export::Targets::default());
    let prometheus = match args.prometheus {
        Some(address) => {
            let exporter = export::prometheus::Exporter::new(
                std::sync::Arc::clone(&targets),
                args.prometheus_max_series
                    .unwrap_or(export::prometheus::DEFAULT_MAX_SERIES),
            );
            let server = exporter
                .serve(address)
                .map_err(|e| format!("ERROR: --prometheus {address}: cannot listen there: {e}"))?;
            if args.verbose {
                eprintln!(
                    "weft: serving Prometheus metrics at http://{}/metrics",
                    server.address()
                );
            }
            Some(server)
        }
        None => None,
    };
    let load_opts = runtime::LoadOptions::default();
    let mut session =
        match runtime::Session::load(&out.compiled.elf, &out.compiled.manifest, &load_opts) {
            Ok(s) => s,
            Err(e) => return Err(run_error::runtime_error(&e, &out.compiled, &sources)),
        };
    if args.stats {
        session.enable_stats().map_err(|e| {
            format!("ERROR: --stats: the kernel refused to count BPF run time: {e}")
        })?;
        export::want_program_stats();
    }
    let exporting = prometheus.is_some() || args.otlp.is_some();
    let stream_tap: Option<std::sync::Arc<dyn streams::StreamObserver>> = if exporting {
        let name = match (&args.program, &args.script_file) {
            (None, Some(path)) => path
                .file_name()
                .map_or("-e".into(), |n| n.to_string_lossy().into_owned()),
            _ => "-e".to_string(),
        };
        let span_queue = args.otlp.as_ref().map(|o| o.queue);
        Some(export_session(
            &targets,
            &session,
            &out.compiled.manifest,
            name,
            span_queue,
        )?)
    } else {
        None
    };
    let otlp = match args.otlp.clone() {
        Some(options) => Some(
            export::otlp::OtlpExporter::start(
                options,
                std::sync::Arc::clone(&targets),
                export::otlp::clock(),
                export::otlp::seed(),
            )
            .map_err(|e| format!("ERROR: --otlp: cannot start its thread: {e}"))?,
        ),
        None => None,
    };
    let writer: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .map_err(|e| format!("ERROR: cannot write {}: {e}", path.display()))?,
        ),
        None => Box::new(io::stdout().lock()),
    };
    // The live status line: stderr is a terminal and -q was not given.
    let (mut status, writer): (Option<status::StatusLine>, Box<dyn Write>) =
        if !args.quiet && io::IsTerminal::is_terminal(&io::stderr()) {
            let to_stdout = args.output.is_none();
            let (line, writer) = status::StatusLine::new(writer, args.stats, to_stdout);
            (Some(line), Box::new(writer))
        } else {
            (None, writer)
        };
    let writer = BufWriter::with_capacity(64 * 1024, writer);
    for warning in args
        .timeline
        .iter()
        .flat_map(|path| streams::timeline_warnings(&out.compiled.manifest, path))
    {
        eprintln!("{warning}");
    }
    let timeline = match &args.timeline {
        Some(path) => Some((
            path.clone(),
            std::fs::File::create(path)
                .map_err(|e| format!("ERROR: cannot write {}: {e}", path.display()))?,
        )),
        None => None,
    };
    let mut sink: Box<dyn Sink> = match args.format.unwrap_or(OutputFormat::Text) {
        OutputFormat::Text => Box::new(
            TextSink::new(writer)
                .with_messages(Box::new(status::MessagesToStderr))
                .with_local_time(Box::new(runtime::clock::local_utc_offset)),
        ),
        OutputFormat::Json => Box::new(JsonSink::new(writer)),
    };
    let profiling = args.flamegraph.is_some() || args.folded.is_some();
    if profiling {
        profile::script::check(&out.compiled.manifest)?;
    }
    let mut helper_errors = (args.helper_errors != abi::HelperErrors::Off)
        .then(|| helper_errors::HelperErrors::new(&sources, &out.compiled.manifest));
    let run_opts = run::RunOptions {
        quiet: args.quiet || args.bench,
        mode: if args.bench {
            run::RunMode::Bench
        } else if args.dry_run {
            run::RunMode::DryRun
        } else {
            run::RunMode::Trace
        },
        no_warnings: args.no_warnings,
        child: child.as_mut(),
        pid: args.pid,
        notify_attached: std::env::var_os("__BPFTRACE_NOTIFY_PROBES_ATTACHED").is_some(),
        timeline,
        stream_tap,
        symbols: None,
        on_tick: None,
        symbol_times: None,
        stop: None,
        on_attached: None,
        stats: args.stats,
        status: status.as_mut(),
        helper_errors: helper_errors.as_mut(),
    };
    // With --flamegraph/--folded the stack maps are kept on their way to the sink.
    let (result, profiled) = if profiling {
        let mut p =
            profile::sink::ProfileSink::new(Some(sink.as_mut()), profile::sink::script_roles());
        let result = run::run(&mut session, &mut p, run_opts);
        (result, Some((p.samples, p.maps)))
    } else {
        (run::run(&mut session, sink.as_mut(), run_opts), None)
    };
    let _ = sink.flush();
    // The exporters stop before the maps go; what was queued is sent.
    drop(prometheus);
    if let Some(otlp) = otlp {
        for line in otlp.finish(args.verbose) {
            eprintln!("{line}");
        }
    }
    drop(session);
    if let Some(c) = child.as_mut() {
        c.kill();
    }
    match result {
        Ok(code) => match profiled {
            Some((samples, maps)) => profile::script::write(
                args.flamegraph.as_deref(),
                args.folded.as_deref(),
                samples,
                &maps,
                &out.compiled.manifest,
                &profile::quoted_command_line(
                    &["weft"],
                    &std::env::args_os().skip(1).collect::<Vec<_>>(),
                ),
            )
            .map(|()| code),
            None => Ok(code),
        },
        Err(e) => e
            .report(&out.compiled, &sources, args.command.as_deref())
            .map(|()| 0),
    }
}

/// The named parameters against the script's `getopt()` calls, as bpftrace
/// words it: a value that is not of its option's type, or an option no
/// `getopt` names, is an error with the list of expected options (`-- --help`
/// asks for that list, with the descriptions).
fn check_named_params(
    named: &syntax::NamedOutcome,
    given: &[syntax::NamedParam],
) -> Result<(), String> {
    if let Some(invalid) = named.invalid.first() {
        return Err(format!("ERROR: {invalid}"));
    }
    let unexpected = named.unexpected(given);
    let help = given.iter().any(|p| p.name == "help");
    if unexpected.is_empty() && !help {
        return Ok(());
    }
    let mut message = String::new();
    if !unexpected.is_empty() {
        let listed: Vec<String> = unexpected.iter().map(|n| format!("--{n}")).collect();
        message.push_str(&format!(
            "ERROR: unexpected program command line options: {}\n",
            listed.join(", ")
        ));
    }
    message.push_str(&format!("HINT: {}", named.hint(help)));
    Err(message)
}

/// The script's text into `sources`: `-e`, a file, or stdin for `-`.
pub(crate) fn read_script(args: &Args, sources: &mut SourceMap) -> Result<source::FileId, String> {
    match (&args.program, &args.script_file) {
        (Some(p), _) => Ok(sources.add("stdin", p.clone())),
        (None, Some(path)) if path.as_os_str() == "-" => {
            let mut text = String::new();
            io::Read::read_to_string(&mut io::stdin(), &mut text)
                .map_err(|e| format!("ERROR: cannot read the script from stdin: {e}"))?;
            Ok(sources.add("stdin", text))
        }
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                format!(
                    "ERROR: failed to open file '{}': {}",
                    path.display(),
                    io_reason(&e)
                )
            })?;
            Ok(sources.add(path.display().to_string(), text))
        }
        (None, None) => Err("ERROR: no program given".into()),
    }
}

/// `--probe-filter REGEX` as the checker takes it.
fn probe_filter(pattern: &str) -> Result<sema::ProbeFilter, String> {
    let re = regex_lite::Regex::new(pattern)
        .map_err(|e| format!("ERROR: Invalid --probe-filter regex `{pattern}`: {e}"))?;
    Ok(sema::ProbeFilter {
        pattern: pattern.to_string(),
        matches: std::sync::Arc::new(move |name: &str| re.is_match(name)),
    })
}

/// Whether process `pid` exists (it may not be ours to signal); a pid above
/// the kernel's `pid_max` is out of range, in bpftrace's words.
fn process_exists(pid: u32) -> Result<(), String> {
    use runtime::process::NoProcess;
    runtime::process::check_exists(pid).map_err(|why| match why {
        NoProcess::OutOfRange => format!("Pid out of range: {pid}"),
        NoProcess::Missing => format!("-p {pid}: no such process"),
    })
}

/// Hands a loaded script to the exporters (saying which maps cannot be
/// exported), and returns the tap the event loop feeds its streams to.
fn export_session(
    targets: &export::Targets,
    session: &runtime::Session,
    manifest: &abi::Manifest,
    name: String,
    span_queue: Option<usize>,
) -> Result<std::sync::Arc<export::StreamTap>, String> {
    let reader = session
        .reader()
        .map_err(|e| format!("ERROR: exporting: {e}"))?;
    let tap = std::sync::Arc::new(export::StreamTap::new(manifest, span_queue));
    let (target, warnings) =
        export::Target::new(None, name, manifest, reader, std::sync::Arc::clone(&tap));
    for w in warnings {
        eprintln!("weft: export: {w}");
    }
    targets.replace(std::sync::Arc::new(target));
    Ok(tap)
}

/// The environment's `BPFTRACE_*` variables: bpftrace's config keys
/// (`BPFTRACE_STACK_MODE=raw`), which sema applies over the script's
/// `config` block, as bpftrace does.
fn bpftrace_env() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k.starts_with("BPFTRACE_"))
        .collect()
}
