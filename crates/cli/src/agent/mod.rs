//! `weft agent --config FILE`: several scripts in one process behind one
//! exporter, for running under systemd on every host of a fleet.
//!
//! Each script is compiled on the main thread and runs the ordinary event
//! loop (`run::run`) on a thread of its own, with its own session, maps and
//! ring buffer; its maps are exported with a `script` label. SIGHUP reads
//! the file again: a script whose text or settings changed is compiled and
//! started anew, and only once the new version is attached is the old one
//! stopped (so a script that fails to compile or load keeps its old version
//! running, and the failure is logged and shown at `/healthz`); scripts
//! that did not change keep running untouched, counters and all. SIGINT or
//! SIGTERM stops everything. `/healthz` is 200 while every configured
//! script runs, 503 otherwise, with one line per script. `[profile]` runs
//! `weft profile` at a low frequency, a pprof file per interval.

pub mod config;
mod profile;

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use config::{AgentConfig, ScriptConfig, ScriptSource};
use output::{Sink, TextSink};
use runtime::SysKernelInfo;
use source::{SourceMap, render_all};

use export::{self, StreamTap, Target, Targets};

/// How long a new script may take to load and attach.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// One script running on its thread.
struct Running {
    config: ScriptConfig,
    /// The text it was compiled from.
    text: String,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<(), String>>,
}

/// What `/healthz` shows of each script.
#[derive(Clone, Debug, Default)]
struct Health {
    /// Per script: running, and the last problem (a failed reload, a stop).
    scripts: BTreeMap<String, (bool, Option<String>)>,
    /// A problem of the configuration file itself (the last reload's).
    config_error: Option<String>,
}

impl Health {
    fn answer(&self) -> (bool, String) {
        let mut healthy = self.config_error.is_none();
        let mut text = String::new();
        for (name, (running, problem)) in &self.scripts {
            healthy &= *running;
            text.push_str(&format!(
                "{name}: {}{}\n",
                if *running { "running" } else { "stopped" },
                problem
                    .as_ref()
                    .map(|p| format!("; {}", p.lines().next().unwrap_or_default()))
                    .unwrap_or_default()
            ));
        }
        if let Some(e) = &self.config_error {
            text.push_str(&format!("config: {e}\n"));
        }
        (healthy, if healthy { format!("ok\n{text}") } else { text })
    }
}

/// Runs the agent until SIGINT or SIGTERM.
pub fn run(config_path: &Path, verbose: bool) -> ExitCode {
    let config = match config::load(config_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ERROR: weft agent: {e}");
            return ExitCode::from(2);
        }
    };
    runtime::signals::install();
    runtime::signals::install_reload();
    let kernel = SysKernelInfo::new();
    let targets = Arc::new(Targets::default());
    let health = Arc::new(Mutex::new(Health::default()));
    let server = match config.prometheus {
        Some(address) => {
            let health = Arc::clone(&health);
            let exporter = export::prometheus::Exporter::new(
                Arc::clone(&targets),
                config
                    .max_series
                    .unwrap_or(export::prometheus::DEFAULT_MAX_SERIES),
            )
            .with_health(move || {
                health
                    .lock()
                    .map(|h| h.answer())
                    .unwrap_or((false, String::new()))
            });
            match exporter.serve(address) {
                Ok(s) => {
                    eprintln!(
                        "weft agent: serving /metrics and /healthz at http://{}",
                        s.address()
                    );
                    Some(s)
                }
                Err(e) => {
                    eprintln!("ERROR: weft agent: prometheus {address}: cannot listen there: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        None => None,
    };
    let otlp = match otlp_options(&config) {
        Some(options) => match export::otlp::OtlpExporter::start(
            options,
            Arc::clone(&targets),
            export::otlp::clock(),
            export::otlp::seed(),
        ) {
            Ok(o) => Some(o),
            Err(e) => {
                eprintln!("ERROR: weft agent: otlp: cannot start its thread: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => None,
    };
    let span_queue = otlp_options(&config).map(|o| o.queue);
    let mut running: Vec<Running> = Vec::new();
    for script in &config.scripts {
        match start(script, &kernel, &targets, span_queue) {
            Ok(r) => {
                eprintln!("weft agent: {}: running", script.name);
                set_health(&health, &script.name, true, None);
                running.push(r);
            }
            Err(e) => {
                eprintln!("weft agent: {}: not started:\n{e}", script.name);
                set_health(&health, &script.name, false, Some(e));
            }
        }
    }
    let profile = config
        .profile
        .as_ref()
        .and_then(|p| match profile::start(p) {
            Ok(running) => {
                eprintln!(
                    "weft agent: [profile]: {} Hz, a pprof file every {} s in {}",
                    p.frequency,
                    p.interval.as_secs_f64(),
                    p.output.display()
                );
                Some(running)
            }
            Err(e) => {
                eprintln!("weft agent: [profile]: not started: {e}");
                None
            }
        });
    let mut config = config;
    while !runtime::signals::stop_requested() {
        std::thread::sleep(Duration::from_millis(100));
        if runtime::signals::reload_requested() {
            config = reload(
                config_path,
                config,
                &kernel,
                &targets,
                &health,
                &mut running,
                span_queue,
            );
        }
        // A script that ended by itself (`exit()`, an error) is said once.
        let mut index = 0;
        while index < running.len() {
            if running[index].thread.is_finished() {
                let r = running.remove(index);
                let name = r.config.name.clone();
                let why = match r.thread.join() {
                    Ok(Ok(())) => "it ended (exit() or END)".to_string(),
                    Ok(Err(e)) => e,
                    Err(_) => "its thread panicked".to_string(),
                };
                eprintln!("weft agent: {name}: stopped: {why}");
                targets.remove(&name);
                set_health(&health, &name, false, Some(why));
            } else {
                index += 1;
            }
        }
    }
    for r in &running {
        r.stop.store(true, Ordering::SeqCst);
    }
    for r in running {
        let _ = r.thread.join();
    }
    drop(profile);
    drop(server);
    if let Some(o) = otlp {
        for line in o.finish(verbose) {
            eprintln!("{line}");
        }
    }
    ExitCode::SUCCESS
}

fn otlp_options(config: &AgentConfig) -> Option<export::otlp::OtlpOptions> {
    config.otlp.as_ref().map(|url| {
        let mut o = export::otlp::OtlpOptions::new(url.clone());
        o.metrics_interval = config.otlp_metrics_interval;
        o
    })
}

fn set_health(health: &Mutex<Health>, name: &str, running: bool, problem: Option<String>) {
    if let Ok(mut h) = health.lock() {
        h.scripts.insert(name.to_string(), (running, problem));
    }
}

/// The text of a script.
fn script_text(config: &ScriptConfig) -> Result<String, String> {
    match &config.source {
        ScriptSource::File(path) => std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display())),
        ScriptSource::Program(text) => Ok(text.clone()),
    }
}

/// Compiles and starts one script, returning once it is attached (or why
/// it could not be).
fn start(
    config: &ScriptConfig,
    kernel: &SysKernelInfo,
    targets: &Arc<Targets>,
    span_queue: Option<usize>,
) -> Result<Running, String> {
    let text = script_text(config)?;
    let mut sources = SourceMap::new();
    let file_name = match &config.source {
        ScriptSource::File(path) => path.display().to_string(),
        ScriptSource::Program(_) => format!("{} (program)", config.name),
    };
    let file = sources.add(file_name, text.clone());
    let opts = sema::CheckOptions::default();
    let mut dumps = String::new();
    let out = tracer::pipeline::compile(
        &mut sources,
        file,
        kernel,
        &opts,
        &codegen::Options::default(),
        None,
        &mut dumps,
    )
    .map_err(|diags| render_all(diags.iter(), &sources))?
    .without_front();
    let writer: Box<dyn Write + Send> = match &config.output {
        Some(path) => Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        ),
        None => Box::new(io::sink()),
    };
    let manifest = out.compiled.manifest.clone();
    let tap = Arc::new(StreamTap::new(&manifest, span_queue));
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<Result<runtime::SessionReader, String>>();
    let name = config.name.clone();
    let thread_stop = Arc::clone(&stop);
    let thread_tap = Arc::clone(&tap);
    let thread = std::thread::Builder::new()
        .name(format!("weft-{name}"))
        .spawn(move || -> Result<(), String> {
            let compiled = out.compiled;
            let load_opts = runtime::LoadOptions {
                object_name: Some("weft".into()),
                ..Default::default()
            };
            let mut session =
                match runtime::Session::load(&compiled.elf, &compiled.manifest, &load_opts) {
                    Ok(s) => s,
                    Err(e) => {
                        let message = tracer::run_error::runtime_error(&e, &compiled, &sources);
                        let _ = tx.send(Err(message.clone()));
                        return Err(message);
                    }
                };
            let reader = match session.reader() {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                    return Err(e.to_string());
                }
            };
            let mut reader = Some(reader);
            let attached_tx = tx.clone();
            let mut sink = TextSink::new(BufWriter::new(writer));
            let options = tracer::run::RunOptions {
                quiet: true,
                mode: tracer::run::RunMode::Trace,
                no_warnings: false,
                child: None,
                pid: None,
                notify_attached: false,
                timeline: None,
                stream_tap: Some(thread_tap),
                symbols: None,
                on_tick: None,
                symbol_times: None,
                stop: Some(thread_stop),
                on_attached: Some(Box::new(move || {
                    if let Some(r) = reader.take() {
                        let _ = attached_tx.send(Ok(r));
                    }
                })),
                stats: false,
                status: None,
                helper_errors: None,
            };
            let result = tracer::run::run(&mut session, &mut sink, options);
            let _ = sink.flush();
            match result {
                Ok(_) => Ok(()),
                Err(e) => {
                    let message = e
                        .report(&compiled, &sources, None)
                        .err()
                        .unwrap_or_else(|| "its output was closed".into());
                    let _ = tx.send(Err(message.clone()));
                    Err(message)
                }
            }
        })
        .map_err(|e| format!("cannot start its thread: {e}"))?;
    let reader = match rx.recv_timeout(START_TIMEOUT) {
        Ok(Ok(reader)) => reader,
        Ok(Err(e)) => {
            let _ = thread.join();
            return Err(e);
        }
        Err(_) => {
            stop.store(true, Ordering::SeqCst);
            return Err(format!(
                "it did not attach within {} s",
                START_TIMEOUT.as_secs()
            ));
        }
    };
    let (target, warnings) = Target::new(
        Some(config.name.clone()),
        config.name.clone(),
        &manifest,
        reader,
        tap,
    );
    for w in warnings {
        eprintln!("weft agent: {}: {w}", config.name);
    }
    targets.replace(Arc::new(target));
    Ok(Running {
        config: config.clone(),
        text,
        stop,
        thread,
    })
}

/// SIGHUP: the file again. Changed scripts are started anew (their old
/// version stopped once the new one runs), removed ones stopped, new ones
/// started; a failure keeps what ran before. Returns the configuration now
/// in force.
fn reload(
    path: &Path,
    old: AgentConfig,
    kernel: &SysKernelInfo,
    targets: &Arc<Targets>,
    health: &Mutex<Health>,
    running: &mut Vec<Running>,
    span_queue: Option<usize>,
) -> AgentConfig {
    let new = match config::load(path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("weft agent: reload: {e}; keeping the configuration in force");
            if let Ok(mut h) = health.lock() {
                h.config_error = Some(e);
            }
            return old;
        }
    };
    if let Ok(mut h) = health.lock() {
        h.config_error = None;
    }
    if new.prometheus != old.prometheus || new.otlp != old.otlp || new.max_series != old.max_series
    {
        eprintln!(
            "weft agent: reload: [agent] settings change only when the agent restarts; the scripts are reloaded"
        );
    }
    // Stopped: scripts no longer in the file.
    let mut index = 0;
    while index < running.len() {
        let name = running[index].config.name.clone();
        if new.scripts.iter().any(|s| s.name == name) {
            index += 1;
            continue;
        }
        let r = running.remove(index);
        stop(r);
        targets.remove(&name);
        if let Ok(mut h) = health.lock() {
            h.scripts.remove(&name);
        }
        eprintln!("weft agent: {name}: removed");
    }
    for script in &new.scripts {
        let text = script_text(script);
        let current = running.iter().position(|r| r.config.name == script.name);
        if let (Some(i), Ok(text)) = (current, &text)
            && running[i].config == *script
            && running[i].text == *text
        {
            continue;
        }
        match start(script, kernel, targets, span_queue) {
            Ok(r) => {
                // The new version runs (and took the target's place): the old one goes.
                if let Some(i) = current {
                    let old = std::mem::replace(&mut running[i], r);
                    stop(old);
                    eprintln!("weft agent: {}: reloaded", script.name);
                } else {
                    running.push(r);
                    eprintln!("weft agent: {}: running", script.name);
                }
                set_health(health, &script.name, true, None);
            }
            Err(e) => {
                let keeps = current.is_some();
                eprintln!(
                    "weft agent: {}: reload failed{}:\n{e}",
                    script.name,
                    if keeps {
                        ", the running version stays"
                    } else {
                        ""
                    }
                );
                set_health(
                    health,
                    &script.name,
                    keeps,
                    Some(format!("the last reload failed: {}", first_line(&e))),
                );
            }
        }
    }
    new
}

fn first_line(text: &str) -> String {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_string()
}

/// Stops one script (its loop sees the flag within 100 ms): detach, END,
/// its output flushed.
fn stop(r: Running) {
    r.stop.store(true, Ordering::SeqCst);
    let _ = r.thread.join();
}
