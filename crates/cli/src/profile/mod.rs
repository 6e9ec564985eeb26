//! `weft profile` (on-CPU samples) and `weft offcpu` (time blocked): a
//! generated script (see [`args::script`]) compiled and run like any other,
//! whose stack-keyed map is read at exit by a [`sink::ProfileSink`] and
//! written as a flame graph, folded stacks or pprof ([`write`]).

pub mod args;
pub mod dwarf;
pub mod script;
pub mod sink;
pub mod svg;
pub mod write;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use output::profile::{KeyRole, Profile, ProfileInfo, ProfileKind};
use runtime::{Session, SysKernelInfo};
use sema::CheckOptions;
use source::{SourceMap, render_all};

use args::{EVENTS_MAP, Mode, PIDS_MAP, ProfileArgs, STACKS_MAP, SwitchProbe};
use runtime::process::HeldChild;
use tracer::stacks::{SymbolTimes, Symbols};

pub fn main(mode: Mode, raw: &[OsString]) -> ExitCode {
    let args = match args::parse(mode, raw) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ERROR: {e}");
            return ExitCode::from(2);
        }
    };
    if args.help {
        print!(
            "{}",
            match mode {
                Mode::OnCpu => args::PROFILE_USAGE,
                Mode::OffCpu => args::OFFCPU_USAGE,
            }
        );
        return ExitCode::SUCCESS;
    }
    runtime::silence_libbpf();
    let command_line = command_line(mode, raw);
    match run(&args, &command_line) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{}", message.trim_end());
            ExitCode::FAILURE
        }
    }
}

/// `weft profile -F 99 ...` as typed (for the SVG subtitle and pprof comment).
fn command_line(mode: Mode, raw: &[OsString]) -> String {
    quoted_command_line(&["weft", mode.command()], raw)
}

/// `first` then `raw`, quoted for a shell where needed.
pub fn quoted_command_line(first: &[&str], raw: &[OsString]) -> String {
    let mut words: Vec<String> = first.iter().map(|w| w.to_string()).collect();
    for a in raw {
        let a = a.to_string_lossy();
        if a.is_empty() || a.contains([' ', '\'', '"', '\\', '$']) {
            words.push(format!("'{}'", a.replace('\'', "'\\''")));
        } else {
            words.push(a.into_owned());
        }
    }
    words.join(" ")
}

/// The roles of `@stacks`' key elements in the generated script.
fn stack_roles(args: &ProfileArgs) -> Vec<KeyRole> {
    let mut roles = vec![KeyRole::Pid, KeyRole::Comm];
    if !args.kernel_only {
        roles.push(KeyRole::UserStack);
    }
    if !args.user_only {
        roles.push(KeyRole::KernelStack);
    }
    roles
}

/// tp_btf where this kernel loads it, else the raw tracepoint.
fn switch_probe(mode: Mode) -> SwitchProbe {
    match (mode, runtime::kernel_features::tp_btf()) {
        (Mode::OffCpu, runtime::Support::Yes) => SwitchProbe::TpBtf,
        _ => SwitchProbe::RawTracepoint,
    }
}

/// How the run went, for the summary and for saying why nothing was sampled.
struct RunFacts {
    elapsed: Duration,
    events: u64,
    /// The `-p` process still lives.
    target_alive: Option<bool>,
    /// The `-c` command exited during the run.
    command_exited: bool,
}

fn run(args: &ProfileArgs, command_line: &str) -> Result<(), String> {
    if let Some(pid) = args.pid
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
    {
        return Err(format!("ERROR: there is no process {pid}"));
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let script = args::script(args, switch_probe(args.mode));
    if args.verbose {
        eprintln!(
            "weft: the {} script:\n{}",
            args.mode.command(),
            script.trim_end()
        );
    }
    let mut sources = SourceMap::new();
    let file = sources.add(format!("weft {}", args.mode.command()), script);
    let kernel = SysKernelInfo::new();
    let mut child = match &args.command {
        Some(cmd) => {
            Some(HeldChild::spawn(cmd).map_err(|e| format!("ERROR: cannot run `{cmd}`: {e}"))?)
        }
        None => None,
    };
    let opts = CheckOptions {
        cpid: child.as_ref().map(HeldChild::pid),
        ..CheckOptions::default()
    };
    let codegen_options = codegen::Options {
        max_map_entries: None,
        stack_map_entries: Some(args::stack_entries(args, cpus)),
        ..codegen::Options::default()
    };
    let mut dumps = String::new();
    let out = tracer::pipeline::compile(
        &mut sources,
        file,
        &kernel,
        &opts,
        &codegen_options,
        None,
        &mut dumps,
    )
    .map_err(|diags| render_all(diags.iter(), &sources))?
    .without_front();
    runtime::signals::install();
    let mut session = Session::load(
        &out.compiled.elf,
        &out.compiled.manifest,
        &Default::default(),
    )
    .map_err(|e| tracer::run_error::runtime_error(&e, &out.compiled, &sources))?;
    let roles = stack_roles(args);
    let mut sink = sink::ProfileSink::new(
        None,
        Box::new(move |spec: &abi::MapSpec| (spec.name == STACKS_MAP).then(|| roles.clone())),
    );
    if args::dwarf(args) {
        sink.dwarf = Some(dwarf::DwarfStacks::new(args.mode == Mode::OffCpu));
    }
    let mut progress = Progress::new(args, &out.compiled.manifest);
    let mut met = MetProcesses::new(&out.compiled.manifest);
    let mut tick = |s: &Session, symbols: &mut Symbols, phase: tracer::run::Phase| match phase {
        tracer::run::Phase::Running => {
            progress.tick(s);
            met.keep_new(s, symbols);
        }
        // The line goes before anything is said at exit.
        tracer::run::Phase::Stopped => progress.clear(),
    };
    let mut times = SymbolTimes::default();
    let started = Instant::now();
    let result = tracer::run::run(
        &mut session,
        &mut sink,
        tracer::run::RunOptions {
            quiet: true,
            mode: tracer::run::RunMode::Trace,
            no_warnings: false,
            child: child.as_mut(),
            pid: args.pid,
            notify_attached: std::env::var_os("__BPFTRACE_NOTIFY_PROBES_ATTACHED").is_some(),
            timeline: None,
            stream_tap: None,
            stats: false,
            status: None,
            helper_errors: None,
            // Stacks are resolved at the end with the mappings kept of each
            // process met (see `MetProcesses`), not in passes over the map
            // while running, which cost CPU for every sample and delay the
            // keeping; the `-c` command is still resolved while held at exit.
            symbols: Some(Symbols::new(
                Duration::MAX,
                Some(vec![STACKS_MAP.to_string()]),
            )),
            on_tick: Some(&mut tick),
            symbol_times: Some(&mut times),
            stop: deadline(args.duration),
            on_attached: None,
        },
    );
    let elapsed = started.elapsed();
    progress.clear();
    drop(session);
    let command_exited = child.as_mut().is_some_and(HeldChild::exited);
    if let Some(c) = child.as_mut() {
        c.kill();
    }
    if let Err(e) = result {
        e.report(&out.compiled, &sources, args.command.as_deref())?;
    }
    let facts = RunFacts {
        elapsed,
        events: sink.count(EVENTS_MAP),
        target_alive: args.pid.map(process_lives),
        command_exited,
    };
    let kind = match args.mode {
        Mode::OnCpu => ProfileKind::OnCpu {
            period_ns: args::period_ns(args.hz),
        },
        Mode::OffCpu => ProfileKind::OffCpu,
    };
    let profile = Profile {
        info: ProfileInfo {
            kind,
            title: match args.mode {
                Mode::OnCpu => "On-CPU Flame Graph".to_string(),
                Mode::OffCpu => "Off-CPU Time Flame Graph".to_string(),
            },
            command_line: command_line.to_string(),
            start_unix_ns: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.saturating_sub(elapsed).as_nanos() as u64),
            duration_ns: elapsed.as_nanos() as u64,
        },
        samples: {
            let mut samples = std::mem::take(&mut sink.samples);
            if let Some(d) = sink.dwarf.as_mut() {
                let started = runtime::symbols::thread_cpu_time();
                samples.extend(d.samples());
                times.user += runtime::symbols::thread_cpu_time().saturating_sub(started);
            }
            samples
        },
    };
    if profile.total() == 0 {
        return Err(no_samples(args, &facts));
    }
    let (written, write_times) = write::write(
        &profile,
        args.output.as_deref(),
        write::WriteOptions {
            pid_frames: args.pid_frames,
            map_roots: false,
        },
    )
    .map_err(|e| format!("ERROR: {e}"))?;
    if !args.quiet {
        eprintln!("{}", summary(args, &profile, &facts, written.as_deref()));
    }
    if let Some(d) = &sink.dwarf {
        // Samples counted in the kernel but never joined to a stack here:
        // lost from the ring buffer, or still in it when the run ended.
        let counted = d.samples_seen();
        if facts.events > counted {
            eprintln!(
                "weft: {} of {} sample(s) taken were not in the profile: their stack copies were lost or not unwound by the end (weft fell behind; a lower -F, -p PID or --frame-pointers costs less)",
                facts.events - counted,
                facts.events
            );
        }
    }
    if args.verbose {
        eprintln!("{}", time_report(&times, write_times, elapsed));
        if let Some(d) = &sink.dwarf {
            let st = d.stats();
            eprintln!(
                "weft: unwinding (CPU): {:.1} ms for {} user stacks ({} answered from the memo), {} frames, {} truncated, {} files' call-frame information read; {} samples had no stack copy",
                d.unwind_time.as_secs_f64() * 1000.0,
                st.stacks,
                st.memo_hits,
                st.frames,
                st.truncated,
                st.files,
                d.unpaired
            );
        }
    }
    Ok(())
}

fn summary(
    args: &ProfileArgs,
    profile: &Profile,
    facts: &RunFacts,
    written: Option<&str>,
) -> String {
    let processes: std::collections::HashSet<Option<u32>> =
        profile.samples.iter().map(|s| s.pid).collect();
    let what = match args.mode {
        Mode::OnCpu => format!("{} samples", profile.total()),
        Mode::OffCpu => format!(
            "{:.3} s off-CPU in {} blocks",
            profile.total() as f64 / 1e6,
            facts.events
        ),
    };
    let mut line = format!(
        "weft: {what} of {} process(es), {} stacks, in {:.2} s",
        processes.len(),
        profile.samples.len(),
        facts.elapsed.as_secs_f64()
    );
    if let Some(path) = written {
        line.push_str(&format!("; wrote {path}"));
    }
    line
}

/// Where weft's own CPU time went after the run, part by part.
fn time_report(times: &SymbolTimes, write: write::WriteTimes, elapsed: Duration) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    format!(
        "weft: time (CPU): map read {:.1} ms, kallsyms {:.1} ms, user symbols (blazesym) {:.1} ms, live map passes {:.1} ms, folding {:.1} ms, output {:.1} ms; the run took {:.0} ms",
        ms(times.exit_maps),
        ms(times.kallsyms),
        ms(times.user),
        ms(times.passes),
        ms(write.folding),
        ms(write.writing),
        ms(elapsed)
    )
}

/// A `-d` run ends by its `exit()` record; when the ring buffer is full
/// (stack copies arriving faster than they are unwound) that record can be
/// lost, so a flag set a quarter second after the duration ends it too.
fn deadline(duration: Option<Duration>) -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    let d = duration?;
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let set = flag.clone();
    std::thread::spawn(move || {
        std::thread::sleep(d + Duration::from_millis(250));
        set.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    Some(flag)
}

/// Whether `pid` still runs: it exists and is no zombie waiting for its
/// parent (which still has a `/proc` entry).
fn process_lives(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // `pid (comm) S ...`: the state follows the comm's last `)`.
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next());
        !matches!(state, Some('Z' | 'X') | None)
    })
}

/// Why a run took no samples, in one sentence.
fn no_samples(args: &ProfileArgs, facts: &RunFacts) -> String {
    let secs = facts.elapsed.as_secs_f64();
    let what = match args.mode {
        Mode::OnCpu => "no samples",
        Mode::OffCpu => "no off-CPU time",
    };
    let why = match (args.pid, &args.command, facts.target_alive) {
        (Some(pid), _, Some(false)) => format!(
            "process {pid} exited before {}",
            match args.mode {
                Mode::OnCpu => "a sample was taken",
                Mode::OffCpu => "it blocked and woke up again",
            }
        ),
        (Some(pid), _, _) => match args.mode {
            Mode::OnCpu => format!(
                "process {pid} did not run on a CPU while a timer fired in {secs:.2} s: it was blocked or sleeping (see where with `weft offcpu -p {pid}`)"
            ),
            Mode::OffCpu => format!(
                "process {pid} did not block and wake up in {secs:.2} s (at least {} us each)",
                args.min_us
            ),
        },
        (None, Some(cmd), _) => match args.mode {
            Mode::OnCpu => format!(
                "`{cmd}` {} without being on a CPU when the {} Hz timer fired (a run this short needs a higher -F)",
                if facts.command_exited {
                    format!("ran {:.0} ms", secs * 1000.0)
                } else {
                    "ran".to_string()
                },
                args.hz
            ),
            Mode::OffCpu => format!("`{cmd}` did not block for {} us or more", args.min_us),
        },
        (None, None, _) => match args.mode {
            Mode::OnCpu if !args.include_idle => format!(
                "in {secs:.2} s no CPU ran anything but the idle task (--include-idle keeps its samples)"
            ),
            Mode::OnCpu => format!("the timer fired no sample in {secs:.2} s"),
            Mode::OffCpu => {
                format!("no thread blocked and woke up in {secs:.2} s within the limits asked for")
            }
        },
    };
    let mut message = format!("weft: {what}: {why}");
    if facts.events > 0 {
        message.push_str(&format!(
            " ({} were counted, but their stacks were lost: see above)",
            facts.events
        ));
    }
    message
}

/// Keeps the mappings of each process the profile meets, as soon as its
/// first stack wakes weft (see [`args::PIDS_MAP`]), so a process that exits
/// during the run still resolves.
struct MetProcesses {
    bpf_name: Option<String>,
    /// When (`nsecs`) each process was met: a new time means it ran `exec`.
    known: std::collections::HashMap<u32, u64>,
    /// Entries of the map when last read: a read is only needed when it grew.
    last_read: Option<Instant>,
}

impl MetProcesses {
    fn new(manifest: &abi::Manifest) -> MetProcesses {
        MetProcesses {
            bpf_name: manifest
                .maps
                .iter()
                .find(|m| m.name == PIDS_MAP)
                .map(|m| m.bpf_name.clone()),
            known: std::collections::HashMap::new(),
            last_read: None,
        }
    }

    fn keep_new(&mut self, session: &Session, symbols: &mut Symbols) {
        // At most every 20 ms: a burst of new processes is one read.
        if self
            .last_read
            .is_some_and(|t| t.elapsed() < Duration::from_millis(20))
        {
            return;
        }
        self.last_read = Some(Instant::now());
        let Some(name) = &self.bpf_name else { return };
        let Ok(entries) = session.map_entries(name) else {
            return;
        };
        let word = |b: &[u8]| {
            b.get(..8)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u64::from_le_bytes)
        };
        for (key, values) in entries {
            let pid = word(&key) as u32;
            let met = values.first().map_or(0, |v| word(v));
            if pid != 0 && self.known.insert(pid, met) != Some(met) {
                symbols.remember_process(pid);
            }
        }
    }
}

/// The line `weft profile` keeps up to date on a terminal.
struct Progress {
    enabled: bool,
    bpf_name: Option<String>,
    mode: Mode,
    started: Instant,
    last: Option<Instant>,
    shown: bool,
}

impl Progress {
    fn new(args: &ProfileArgs, manifest: &abi::Manifest) -> Progress {
        Progress {
            enabled: !args.quiet && std::io::stderr().is_terminal(),
            bpf_name: manifest
                .maps
                .iter()
                .find(|m| m.name == EVENTS_MAP)
                .map(|m| m.bpf_name.clone()),
            mode: args.mode,
            started: Instant::now(),
            last: None,
            shown: false,
        }
    }

    fn tick(&mut self, session: &Session) {
        if !self.enabled
            || self
                .last
                .is_some_and(|t| t.elapsed() < Duration::from_millis(250))
        {
            return;
        }
        self.last = Some(Instant::now());
        let Some(name) = &self.bpf_name else { return };
        let count: u64 = session
            .map_entries(name)
            .map(|entries| {
                entries
                    .iter()
                    .flat_map(|(_, per_cpu)| per_cpu.iter())
                    .map(|v| {
                        u64::from_le_bytes(
                            v.get(..8)
                                .and_then(|b| b.try_into().ok())
                                .unwrap_or_default(),
                        )
                    })
                    .sum()
            })
            .unwrap_or(0);
        let what = match self.mode {
            Mode::OnCpu => "samples",
            Mode::OffCpu => "blocks",
        };
        eprint!(
            "\rweft: {count} {what}, {:.1} s (Ctrl-C to stop)\x1b[K",
            self.started.elapsed().as_secs_f64()
        );
        self.shown = true;
    }

    fn clear(&mut self) {
        if self.shown {
            eprint!("\r\x1b[K");
            self.shown = false;
        }
    }
}
