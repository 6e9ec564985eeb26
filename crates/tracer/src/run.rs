//! The life of a run: load, BEGIN, attach, drain the ring buffer until the
//! script exits (or the command ends, or a signal), detach, END, print maps.
//! BEGIN's output is read only once everything is attached.

use std::collections::VecDeque;
use std::io::Write;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use abi::{CounterIndex, EVENT_HEADER_SIZE, EventKind, Manifest};
use output::{Render, Sink, decode, decode_map_with};

pub use crate::run_error::RunError;
use crate::run_error::io_error;
use runtime::Session;

use crate::streams::Streams;
use runtime::process::HeldChild;
use runtime::signals;

/// How long one wait on the ring buffer may last before the loop looks at
/// signals and the traced command again.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// A ring-buffer record that needs the session (map reads) or ends the run;
/// printf records are written straight to the sink.
enum Action {
    /// `exit(code)`: the status weft exits with.
    Exit(u8),
    Print {
        map: usize,
        top: u64,
        div: u64,
    },
    Clear(usize),
    Zero(usize),
    /// A stream record holding stacks or symbols, resolved before printing.
    Stream {
        id: usize,
        record: Vec<u8>,
    },
    /// A printf (index in the manifest) whose arguments hold stacks or
    /// symbols, resolved before printing.
    Printf {
        site: usize,
        args: Vec<output::Value>,
    },
}

/// A callback between waits (the session and the symbol tables), and once
/// more when the probes stop firing ([`Phase::Stopped`]), before anything is
/// printed at exit.
pub type Tick<'a> = dyn FnMut(&Session, &mut crate::stacks::Symbols, Phase) + 'a;

/// Where a run is when [`Tick`] is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Running,
    Stopped,
}

pub struct RunOptions<'a> {
    pub quiet: bool,
    /// Trace, attach and leave (`--dry-run`), or time the bench probes.
    pub mode: RunMode,
    /// `--no-warnings`: warnings are not printed.
    pub no_warnings: bool,
    pub child: Option<&'a mut HeldChild>,
    pub pid: Option<u32>,
    pub notify_attached: bool,
    /// `--timeline FILE`: the file, already created, written at exit.
    pub timeline: Option<(std::path::PathBuf, std::fs::File)>,
    /// The exporters' view of the streams (`--prometheus`, `--otlp`), fed each record.
    pub stream_tap: Option<std::sync::Arc<dyn crate::streams::StreamObserver>>,
    /// Symbol tables set up by the caller (how often live passes run);
    /// `None`: the defaults.
    pub symbols: Option<crate::stacks::Symbols>,
    /// Called between waits while the probes are attached (progress lines,
    /// keeping the mappings of processes a profile has met).
    pub on_tick: Option<&'a mut Tick<'a>>,
    /// Where the symbols' time went, filled in at the end of the run.
    pub symbol_times: Option<&'a mut crate::stacks::SymbolTimes>,
    /// Ends the run when set (an agent's script being stopped or swapped),
    /// as SIGINT does.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Called once every probe is attached (the agent waits for it).
    pub on_attached: Option<Box<dyn FnOnce() + Send + 'a>>,
    /// `--stats`: report the run's cost at exit (the caller turned the
    /// kernel's run statistics on).
    pub stats: bool,
    /// The live status line (a terminal, without `-q`).
    pub status: Option<&'a mut crate::status::StatusLine>,
    /// `-k`/`-kk`: where failed helper calls are reported.
    pub helper_errors: Option<&'a mut crate::helper_errors::HelperErrors<'a>>,
}

/// What a run does once the program is loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// Run BEGIN, attach, trace until the end, run END, print the maps.
    Trace,
    /// `--dry-run`: attach every probe, then detach; no probe runs (BEGIN
    /// neither) and nothing is printed.
    DryRun,
    /// `--mode bench`: run BEGIN, time each `bench:` probe
    /// ([`crate::bench`]), run END, print the maps.
    Bench,
}

/// Runs a loaded session to its end: the status the script asked to exit
/// with (`exit(code)`; 0 without). Errors are returned after cleanup.
pub fn run(
    session: &mut Session,
    sink: &mut dyn Sink,
    mut opts: RunOptions<'_>,
) -> Result<u8, RunError> {
    let manifest = session.manifest().clone();
    output::set_string_trailer(manifest.settings.str_trunc_trailer.as_bytes());
    let target = opts.pid.map(runtime::process::ProcessWatch::new);
    let mut pump = Pump {
        manifest: &manifest,
        actions: VecDeque::new(),
        streams: Streams::new(&manifest, opts.timeline.take(), opts.stream_tap.take()),
        zeroed: vec![false; manifest.maps.len()],
        symbols: opts
            .symbols
            .take()
            .unwrap_or_default()
            .with_time_formats(&manifest.time_formats),
        records: 0,
        helper_failures: Vec::new(),
        no_warnings: opts.no_warnings,
        exit_code: None,
        pcaps: crate::pcap::PcapFiles::create(&manifest.skb_outputs)
            .map_err(|(path, e)| RunError::Pcap(path, e))?,
    };
    // bpftrace's order: BEGIN runs first (its map writes are in place
    // before any probe fires), then every probe is attached, `Attached N
    // probes` is said, and only then is BEGIN's output read. An attach
    // failure ends the run with the error, before any output of BEGIN and
    // without printing the maps.
    if opts.mode == RunMode::DryRun {
        session.attach()?;
        session.detach();
        return Ok(0);
    }
    // Caught before BEGIN runs: a signal sent once weft is up runs the
    // probes instead of ending weft.
    let self_signals = session.signals_handled();
    for &signal in &self_signals {
        signals::install_self_signal(signal);
    }
    session.run_begin()?;
    session.attach()?;
    for refused in session.skipped().iter().filter(|_| !opts.no_warnings) {
        eprintln!("WARNING: {refused}; left out of the wildcard's probes");
    }
    if !opts.quiet {
        // A wildcard's function the kernel refused is not counted.
        let refused: Vec<&str> = session.skipped().iter().map(|e| e.probe()).collect();
        let attached = manifest
            .programs
            .iter()
            .filter(|p| !refused.contains(&p.probe.as_str()));
        sink.attached_probes(abi::attached_probe_count(attached))
            .map_err(io_error)?;
        sink.flush().map_err(io_error)?;
    }
    if opts.notify_attached {
        // On stdout, where bpftrace prints it (suite cases pipe stdout past it).
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "__BPFTRACE_NOTIFY_PROBES_ATTACHED")
            .and_then(|()| stdout.flush())
            .map_err(io_error)?;
    }
    if let Some(attached) = opts.on_attached.take() {
        attached();
    }
    let stop_flag = opts.stop.take();
    let stopped = || {
        signals::stop_requested()
            || stop_flag
                .as_ref()
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::SeqCst))
    };
    test_hook_panic();
    let baseline = crate::overhead::Baseline::now();
    if let Some(status) = opts.status.as_deref_mut() {
        status.start();
    }
    // Ring-buffer losses already reported with a `Lost N events` line.
    let mut lost_reported = 0u64;
    // `exit()` in BEGIN: the run ends without starting the command.
    let mut stop = pump.run(session, sink, Duration::ZERO)?;
    // With nothing but BEGIN and END, nothing can happen after BEGIN: the
    // run ends, as bpftrace's does (a `-c` command still runs to its end).
    let nothing_after_begin = opts.child.is_none()
        && manifest
            .programs
            .iter()
            .all(|p| matches!(p.attach, abi::Attach::Begin | abi::Attach::End));
    if opts.mode == RunMode::Bench && !stop {
        lost_reported += crate::bench::run(session, sink)?;
        stop = true;
    }
    // `iter:` probes: each iterator is read to its end on a thread of its
    // own while this one drains the ring buffer; the run ends when all are.
    let mut iterators = Vec::new();
    if !stop {
        for run in session.open_iterators()? {
            iterators.push(std::thread::spawn(move || run.run()));
        }
    }
    if !stop && !nothing_after_begin {
        if let Some(child) = opts.child.as_deref_mut() {
            let exit_maps =
                crate::stacks::needs_user_symbols(&manifest).then(|| pump.symbols.exit_maps());
            child.release(exit_maps).map_err(RunError::Command)?;
            if let Some(fd) = child.wake_fd() {
                session.wake_on(fd)?;
            }
        }
        if let Some(fd) = target
            .as_ref()
            .and_then(runtime::process::ProcessWatch::wake_fd)
        {
            session.wake_on(fd)?;
        }
        loop {
            if !self_signals.is_empty() && signals::self_signal_pending() {
                for &signal in &self_signals {
                    session.run_signal(signal)?;
                }
            }
            let stop = pump.run(session, sink, POLL_INTERVAL)?;
            pump.streams
                .tick(session, &manifest, sink, &mut pump.symbols)?;
            lost_reported = report_new_losses(session, sink, lost_reported)?;
            report_helper_failures(
                &mut pump.helper_failures,
                &manifest,
                &mut opts.helper_errors,
            );
            sink.flush().map_err(io_error)?;
            if let Some(status) = opts.status.as_deref_mut() {
                status.tick(session, pump.records);
            }
            if let Some(tick) = opts.on_tick.as_deref_mut() {
                tick(session, &mut pump.symbols, Phase::Running);
            }
            pump.symbols.resolve_live_user(session, &manifest);
            if stop || stopped() {
                break;
            }
            if !iterators.is_empty() && iterators.iter().all(|t| t.is_finished()) {
                break;
            }
            if opts.child.as_deref_mut().is_some_and(HeldChild::exited) {
                break;
            }
            if target
                .as_ref()
                .is_some_and(runtime::process::ProcessWatch::exited)
            {
                break;
            }
        }
    }
    if let Some(tick) = opts.on_tick.as_deref_mut() {
        tick(session, &mut pump.symbols, Phase::Stopped);
    }
    if let Some(status) = opts.status.as_deref_mut() {
        status.clear();
    }
    for iterator in iterators {
        // On SIGINT the iterator may still be reading: it ends with the
        // links when the session detaches, and its thread with it.
        if iterator.is_finished() {
            match iterator.join() {
                Ok(result) => result?,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    }
    // The run's cost, up to detaching (END's test run is not the run's).
    let stats = opts.stats.then(|| baseline.stats(session));
    session.detach();
    // What the probes wrote before detaching, then END's own output.
    pump.run(session, sink, Duration::ZERO)?;
    session.run_end()?;
    pump.run(session, sink, Duration::ZERO)?;
    let stream_report = pump
        .streams
        .finish(session, &manifest, sink, &mut pump.symbols)?;
    report_helper_failures(
        &mut pump.helper_failures,
        &manifest,
        &mut opts.helper_errors,
    );

    // As `output::print_maps_at_exit`, one map read at a time.
    sink.exit_separator().map_err(io_error)?;
    let mut by_name: Vec<(&abi::MapSpec, bool)> = manifest
        .maps
        .iter()
        .zip(pump.zeroed.iter().copied())
        .collect();
    by_name.sort_by(|a, b| a.0.name.as_bytes().cmp(b.0.name.as_bytes()));
    if !manifest.settings.print_maps_on_exit {
        by_name.clear();
    }
    let exit_maps_started = (runtime::symbols::thread_cpu_time(), pump.symbols.times());
    for (spec, zeroed) in by_name {
        print_map(
            session,
            sink,
            spec,
            zeroed,
            Shown::AtExit,
            &mut pump.symbols,
        )?;
    }
    sink.flush().map_err(io_error)?;
    let counters = session.counters()?;
    let lost = counters[CounterIndex::RingbufFull as usize];
    if lost > lost_reported {
        sink.lost_events(lost - lost_reported).map_err(io_error)?;
    }
    sink.flush().map_err(io_error)?;
    if lost > 0 {
        eprintln!(
            "weft: {lost} event(s) lost in all: the ring buffer was full (BPFTRACE_PERF_RB_PAGES or config = {{ perf_rb_pages = N }} makes it bigger)"
        );
    }
    let map_full = counters[CounterIndex::MapFull as usize];
    if map_full > 0 {
        eprintln!(
            "WARNING: Map full; can't update element. {map_full} update(s) failed and those keys were not counted: raise max_map_keys, or the map's size in its declaration (`let @a = hash(5000)`)"
        );
    }
    if let Some(times) = opts.symbol_times.as_deref_mut() {
        let (cpu_before, symbols_before) = exit_maps_started;
        *times = pump.symbols.times();
        // The maps' own part: all of it but the symbols resolved on the way.
        let resolving = (times.kallsyms + times.user)
            .saturating_sub(symbols_before.kallsyms + symbols_before.user);
        times.exit_maps = runtime::symbols::thread_cpu_time()
            .saturating_sub(cpu_before)
            .saturating_sub(resolving);
    }
    for line in stack_loss_report(&counters, &manifest) {
        eprintln!("{line}");
    }
    for line in stream_report {
        eprintln!("{line}");
    }
    if let Some(reports) = opts.helper_errors.as_deref() {
        for line in reports.summary(&manifest) {
            eprintln!("{line}");
        }
    }
    if let Some(stats) = &stats {
        sink.run_stats(stats).map_err(io_error)?;
        sink.flush().map_err(io_error)?;
        if !sink.carries_stats() {
            let _ = output::stats::write_stats_text(&mut std::io::stderr().lock(), stats);
        }
    }
    if let Some(child) = opts.child {
        child.kill();
    }
    Ok(pump.exit_code.unwrap_or(0))
}

/// A test hook: `WEFT_TEST_PANIC=attached` panics once every probe is
/// attached, so a test can check that a panic leaves nothing of weft's in
/// the kernel (there must be no panic; this tests the guarantee).
fn test_hook_panic() {
    if std::env::var_os("WEFT_TEST_PANIC").is_some_and(|v| v == "attached") {
        panic!("WEFT_TEST_PANIC=attached: panicking with every probe attached (a test hook)");
    }
}

/// Hands the helper failures the records brought to the `-k` reporter.
fn report_helper_failures(
    failures: &mut Vec<(usize, i64)>,
    manifest: &Manifest,
    reporter: &mut Option<&mut crate::helper_errors::HelperErrors<'_>>,
) {
    for (site, error) in failures.drain(..) {
        if let Some(r) = reporter.as_deref_mut() {
            r.failed(manifest, site, error);
        }
    }
}

/// Events the ring buffer dropped since `reported`, as a `Lost N events`
/// line (bpftrace's, when its buffer overflows); the new count reported.
fn report_new_losses(
    session: &Session,
    sink: &mut dyn Sink,
    reported: u64,
) -> Result<u64, RunError> {
    let lost = session.counters()?[CounterIndex::RingbufFull as usize];
    if lost > reported {
        sink.lost_events(lost - reported).map_err(io_error)?;
        return Ok(lost);
    }
    Ok(reported)
}

/// What the stack-loss counters say: stacks that were not captured, and why.
pub fn stack_loss_report(
    counters: &[u64; CounterIndex::COUNT as usize],
    manifest: &Manifest,
) -> Vec<String> {
    let entries = manifest
        .stack_maps
        .iter()
        .map(|m| m.max_entries)
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    let collisions = counters[CounterIndex::StackCollision as usize];
    if collisions > 0 {
        out.push(format!(
            "weft: {collisions} stack(s) were not captured: each hashed to a slot of the {entries}-entry stack map that holds another stack (a larger map makes this rarer: BPFTRACE_MAP_KEYS_MAX, or --stack-storage-size for weft profile and offcpu)"
        ));
    }
    let full = counters[CounterIndex::StackMapFull as usize];
    if full > 0 {
        out.push(format!(
            "weft: {full} stack(s) were not captured because the {entries}-entry stack map was full"
        ));
    }
    out
}

/// Moves records from the ring buffer to the sink, carrying out the actions
/// that need the session in order.
struct Pump<'a> {
    manifest: &'a Manifest,
    actions: VecDeque<Action>,
    streams: Streams,
    /// Per map: `zero()` kept its fired keyless entry (see `decode_map_with`).
    zeroed: Vec<bool>,
    /// Kernel and user symbol tables for stacks, `ksym` and `usym`.
    symbols: crate::stacks::Symbols,
    /// Ring-buffer records received so far (the status line's events).
    records: u64,
    /// Failed helper calls (`-k`) not reported yet: (site, error).
    helper_failures: Vec<(usize, i64)>,
    /// `--no-warnings`: `warnf()` prints nothing.
    no_warnings: bool,
    /// The code of the first `exit(code)` seen.
    exit_code: Option<u8>,
    /// The pcap files `skboutput()` writes.
    pcaps: crate::pcap::PcapFiles,
}

impl Pump<'_> {
    /// Drains until the buffer is empty (waiting up to `timeout` for the first
    /// record). Returns true once `exit()` was seen.
    fn run(
        &mut self,
        session: &mut Session,
        sink: &mut dyn Sink,
        timeout: Duration,
    ) -> Result<bool, RunError> {
        let mut timeout = timeout;
        let started = Instant::now();
        loop {
            self.records += self.drain(session, sink, timeout)? as u64;
            if self.actions.is_empty() {
                return Ok(false);
            }
            if self.handle_actions(session, sink)? {
                return Ok(true);
            }
            // A steady stream of records that need the session (a profile's
            // samples, each printed with its stack) would keep this loop
            // going: the caller ticks and looks for a stop in between.
            if started.elapsed() >= Duration::from_millis(100) {
                return Ok(false);
            }
            timeout = Duration::ZERO;
        }
    }

    /// Hands every available record to the sink; stops early at a record that
    /// needs the session, so output keeps its order. Returns how many records
    /// it took.
    fn drain(
        &mut self,
        session: &mut Session,
        sink: &mut dyn Sink,
        timeout: Duration,
    ) -> Result<usize, RunError> {
        let Pump {
            manifest,
            actions,
            streams,
            helper_failures,
            no_warnings,
            pcaps,
            ..
        } = self;
        let (manifest, no_warnings) = (*manifest, *no_warnings);
        let mut write_error = None;
        let mut pcap_error = None;
        // Reused by every printf record of this drain.
        let mut args: Vec<output::Value> = Vec::new();
        let mut text: Vec<u8> = Vec::new();
        let mut on_event = |rec: &[u8]| -> ControlFlow<()> {
            if rec.len() < EVENT_HEADER_SIZE as usize {
                return ControlFlow::Continue(());
            }
            let kind = u32::from_le_bytes(rec[0..4].try_into().unwrap_or_default());
            let id = u32::from_le_bytes(rec[4..8].try_into().unwrap_or_default()) as usize;
            let word = |at: usize| {
                rec.get(at..at + 8)
                    .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
            };
            match EventKind::from_u32(kind) {
                Some(EventKind::Printf) => {
                    let Some(spec) = manifest.printfs.get(id) else {
                        return ControlFlow::Continue(());
                    };
                    args.clear();
                    args.extend(abi::printf_fields(spec, rec).map(|(a, bytes)| {
                        let mut value = decode(&a.field.layout, bytes);
                        format_timestamps(manifest, &a.field.layout, &mut value);
                        value
                    }));
                    if args.iter().any(output::stack::needs_resolving) {
                        // Symbols need the session, which is busy polling: print it next.
                        actions.push_back(Action::Printf {
                            site: id,
                            args: std::mem::take(&mut args),
                        });
                        return ControlFlow::Break(());
                    }
                    let printed = if spec.action == abi::PrintfAction::Value {
                        print_value(sink, &args)
                    } else {
                        text.clear();
                        spec.format.render_into(&args, &mut text);
                        print_text(
                            sink,
                            &text,
                            spec,
                            manifest.settings.max_cat_bytes,
                            no_warnings,
                        )
                    };
                    if let Err(e) = printed {
                        write_error = Some(e);
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                }
                Some(EventKind::Time) => {
                    let fmt = manifest
                        .time_formats
                        .get(id)
                        .map_or("%H:%M:%S\n", String::as_str);
                    if let Err(e) = sink.time(crate::times::strftime_now(fmt).as_bytes()) {
                        write_error = Some(e);
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                }
                Some(EventKind::Join) => {
                    let delimiter = manifest.join_delimiters.get(id).map_or(" ", String::as_str);
                    let count = (word(8) as u32).min(abi::JOIN_MAX_ARGS);
                    let parts: Vec<&[u8]> = (0..count)
                        .map(|i| {
                            let start = ((abi::JOIN_ARGS_OFFSET + i * abi::JOIN_ARG_SIZE) as usize)
                                .min(rec.len());
                            let end = (start + abi::JOIN_ARG_SIZE as usize).min(rec.len());
                            let s = &rec[start..end];
                            &s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())]
                        })
                        .collect();
                    if let Err(e) = sink.join(&parts.join(delimiter.as_bytes())) {
                        write_error = Some(e);
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                }
                Some(EventKind::Stream) => match streams.record(manifest, id, rec, sink, None) {
                    Ok(true) => ControlFlow::Continue(()),
                    Ok(false) => {
                        // Its stacks need the session, which is busy polling: print it next.
                        actions.push_back(Action::Stream {
                            id,
                            record: rec.to_vec(),
                        });
                        ControlFlow::Break(())
                    }
                    Err(e) => {
                        write_error = Some(e);
                        ControlFlow::Break(())
                    }
                },
                Some(EventKind::Exit) => {
                    // The status a process can exit with: the code's low byte.
                    actions.push_back(Action::Exit(word(8) as u8));
                    ControlFlow::Break(())
                }
                Some(EventKind::HelperError) => {
                    helper_failures.push((id, word(8) as i64));
                    ControlFlow::Continue(())
                }
                Some(EventKind::UserStack) => match sink.user_stack(rec) {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        write_error = Some(e);
                        ControlFlow::Break(())
                    }
                },
                Some(EventKind::SkbOutput) => {
                    let start = abi::SKB_PACKET_OFFSET as usize;
                    let end = usize::try_from(word(16))
                        .map_or(rec.len(), |len| start.saturating_add(len).min(rec.len()));
                    let packet = rec.get(start..end).unwrap_or_default();
                    match pcaps.write(id, word(8), packet) {
                        Ok(()) => ControlFlow::Continue(()),
                        Err(e) => {
                            pcap_error = Some(e);
                            ControlFlow::Break(())
                        }
                    }
                }
                Some(EventKind::Print) => {
                    actions.push_back(Action::Print {
                        map: id,
                        top: word(8),
                        div: word(16),
                    });
                    ControlFlow::Break(())
                }
                Some(EventKind::Clear) => {
                    actions.push_back(Action::Clear(id));
                    ControlFlow::Break(())
                }
                Some(EventKind::Zero) => {
                    actions.push_back(Action::Zero(id));
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            }
        };
        let taken = session.poll(timeout, &mut on_event)?;
        if let Some(e) = write_error {
            return Err(io_error(e));
        }
        if let Some((path, e)) = pcap_error {
            return Err(RunError::Pcap(path, e));
        }
        Ok(taken)
    }

    /// Carries out queued actions, draining the records that follow each one.
    fn handle_actions(
        &mut self,
        session: &mut Session,
        sink: &mut dyn Sink,
    ) -> Result<bool, RunError> {
        let Pump {
            manifest,
            actions,
            zeroed,
            symbols,
            streams,
            no_warnings,
            exit_code,
            ..
        } = self;
        let (manifest, no_warnings) = (*manifest, *no_warnings);
        let mut exit = false;
        while let Some(action) = actions.pop_front() {
            match action {
                Action::Exit(code) => {
                    exit = true;
                    exit_code.get_or_insert(code);
                }
                Action::Print { map, top, div } => {
                    if let Some(spec) = manifest.maps.get(map) {
                        let kept = zeroed.get(map).copied().unwrap_or(false);
                        let shown = Shown::Print { top, div };
                        print_map(session, sink, spec, kept, shown, symbols)?;
                    }
                }
                Action::Printf { site, mut args } => {
                    crate::stacks::resolve_args(&mut args, &mut symbols.resolver(session));
                    let spec = &manifest.printfs[site];
                    if spec.action == abi::PrintfAction::Value {
                        print_value(sink, &args).map_err(io_error)?;
                    } else {
                        print_text(
                            sink,
                            &spec.format.render(&args),
                            spec,
                            manifest.settings.max_cat_bytes,
                            no_warnings,
                        )
                        .map_err(io_error)?;
                    }
                }
                Action::Stream { id, record } => {
                    streams
                        .record(
                            manifest,
                            id,
                            &record,
                            sink,
                            Some(&mut symbols.resolver(session)),
                        )
                        .map_err(io_error)?;
                }
                Action::Clear(map) => {
                    if let Some(spec) = manifest.maps.get(map) {
                        session.clear_map(&spec.bpf_name)?;
                        zeroed[map] = false;
                    }
                }
                Action::Zero(map) => {
                    if let Some(spec) = manifest.maps.get(map) {
                        if spec.key.is_none() && !zeroed[map] {
                            let entries = session.map_entries(&spec.bpf_name)?;
                            zeroed[map] =
                                !decode_map_with(spec, &entries, false).entries.is_empty();
                        }
                        session.zero_map(&spec.bpf_name)?;
                    }
                }
            }
            if exit {
                // Output after exit() in the same batch is dropped, as in bpftrace.
                actions.clear();
                break;
            }
        }
        Ok(exit)
    }
}

/// When a map is printed.
enum Shown {
    /// `print(@m, top, div)`: a keyless map without an entry shows its zero.
    Print { top: u64, div: u64 },
    /// The dump at exit: a map without entries prints nothing.
    AtExit,
}

/// Reads the map into flat buffers (values merged over CPUs while reading),
/// then prints it entry by entry, resolving stacks and symbols on the way.
/// `zeroed`: see `output::decode_map_with`.
fn print_map(
    session: &Session,
    sink: &mut dyn Sink,
    spec: &abi::MapSpec,
    zeroed: bool,
    shown: Shown,
    symbols: &mut crate::stacks::Symbols,
) -> Result<(), RunError> {
    let entries = session.map_entries_merged(
        &spec.bpf_name,
        |size| output::merged_value_size(&spec.value, size),
        |per_cpu, out| output::merge_entry(spec, zeroed, per_cpu.iter(), out),
    )?;
    let raw = output::RawEntries {
        keys: entries.keys(),
        key_size: entries.key_size(),
        values: entries.values(),
        value_size: entries.value_size(),
    };
    let mut resolver = symbols.resolver(session);
    let map = output::FlatMap::new(spec, raw, Some(&mut resolver));
    let (mut map, top, div) = match shown {
        Shown::Print { top, div } => (map.zero_when_empty(), top, div),
        Shown::AtExit => (map, 0, 0),
    };
    sink.flat_map(&mut map, top, div).map_err(io_error)
}

/// `print(value)`: its one argument.
fn print_value(sink: &mut dyn Sink, args: &[output::Value]) -> std::io::Result<()> {
    match args.first() {
        Some(value) => sink.value(value),
        None => Ok(()),
    }
}

/// Turns the `strftime()` times in `value` (laid out as `layout`, tuples
/// included) into their text.
fn format_timestamps(manifest: &Manifest, layout: &abi::Layout, value: &mut output::Value) {
    match (layout, value) {
        (abi::Layout::Timestamp { .. }, output::Value::Timestamp(t)) => {
            t.text = Some(crate::times::time_text(
                &manifest.time_formats,
                t.ns,
                t.format,
            ));
        }
        (abi::Layout::Tuple { fields, .. }, output::Value::Tuple(items)) => {
            for (field, item) in fields.iter().zip(items) {
                format_timestamps(manifest, &field.layout, item);
            }
        }
        _ => {}
    }
}

/// A printf's text; for `cat()` the contents of the file it names, at
/// most `max_cat_bytes` of it (a file that cannot be read is said on stderr
/// and prints empty, as bpftrace does: its JSON still has the `cat`
/// record); for `system()` what the command, run by `sh -c` until it ends,
/// writes to its stdout.
fn print_text(
    sink: &mut dyn Sink,
    text: &[u8],
    spec: &abi::PrintfSpec,
    max_cat_bytes: u32,
    no_warnings: bool,
) -> std::io::Result<()> {
    use std::io::Read as _;
    match spec.action {
        abi::PrintfAction::Print => return sink.printf(text),
        abi::PrintfAction::Error => {
            return sink.source_message(output::Severity::Error, text, &spec.origin);
        }
        abi::PrintfAction::Warning | abi::PrintfAction::RuntimeWarning if no_warnings => {
            return Ok(());
        }
        abi::PrintfAction::Warning => {
            return sink.source_message(output::Severity::Warning, text, &spec.origin);
        }
        abi::PrintfAction::RuntimeWarning => return sink.runtime_warning(text, &spec.origin),
        abi::PrintfAction::System => {
            // What the command printed so far goes first.
            sink.flush()?;
            let command = String::from_utf8_lossy(text).into_owned();
            let output = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(&command)
                .stdin(std::process::Stdio::null())
                .stderr(std::process::Stdio::inherit())
                .output();
            return match output {
                Ok(out) => sink.system(&out.stdout),
                Err(e) => {
                    crate::status::clear_for_stderr();
                    eprintln!("weft: system: cannot run '{command}': {e}");
                    Ok(())
                }
            };
        }
        abi::PrintfAction::Cat => {}
        // Printed by `print_value`.
        abi::PrintfAction::Value => return Ok(()),
    }
    let path = String::from_utf8_lossy(text);
    let read = std::fs::File::open(path.as_ref()).and_then(|f| {
        let mut bytes = Vec::new();
        f.take(u64::from(max_cat_bytes)).read_to_end(&mut bytes)?;
        Ok(bytes)
    });
    match read {
        Ok(bytes) => sink.cat(&bytes),
        Err(e) => {
            eprintln!(
                "ERROR: failed to open file '{path}' ({})",
                crate::run_error::io_reason(&e)
            );
            sink.cat(b"")
        }
    }
}
