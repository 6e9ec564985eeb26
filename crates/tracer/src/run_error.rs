//! Why a run stopped early, and how that is said: the runtime's typed
//! errors get their help text here, at the edge (EPERM → the capabilities to
//! grant, a missing kprobe → how to list the functions), and a verifier
//! rejection is mapped back to the script line.

use std::io;

use runtime::{AttachError, LoadError, RuntimeError};
use source::{Diagnostic, SourceMap, render};

/// Why a run stopped early.
pub enum RunError {
    Runtime(RuntimeError),
    /// Writing the output failed (closed pipe, full disk).
    Output(std::io::Error),
    /// The `-c` command could not be started (`exec` failed).
    Command(std::io::Error),
    /// An `skboutput()` pcap file could not be created or written.
    Pcap(String, std::io::Error),
}

impl From<RuntimeError> for RunError {
    fn from(e: RuntimeError) -> RunError {
        RunError::Runtime(e)
    }
}

impl From<runtime::AttachError> for RunError {
    fn from(e: runtime::AttachError) -> RunError {
        RunError::Runtime(e.into())
    }
}

impl From<runtime::MapError> for RunError {
    fn from(e: runtime::MapError) -> RunError {
        RunError::Runtime(e.into())
    }
}

/// A failed write of the output.
pub fn io_error(e: io::Error) -> RunError {
    RunError::Output(e)
}

impl RunError {
    /// What the user reads: `Ok` when the run ended quietly after all (a
    /// closed pipe, as `weft ... | head` gives), else the rendered error.
    /// `command` is the `-c` command.
    pub fn report(
        self,
        compiled: &codegen::Compiled,
        sources: &SourceMap,
        command: Option<&str>,
    ) -> Result<(), String> {
        match self {
            RunError::Runtime(e) => Err(runtime_error(&e, compiled, sources)),
            // A closed pipe (`weft ... | head`) ends the run quietly, like bpftrace.
            RunError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            RunError::Output(e) => Err(format!("ERROR: writing output: {e}")),
            RunError::Command(e) => Err(format!(
                "ERROR: cannot run `{}`: {e}",
                command.unwrap_or_default()
            )),
            RunError::Pcap(path, e) => {
                Err(format!("ERROR: cannot write the pcap file {path}: {e}"))
            }
        }
    }
}

/// The help line of a kprobe the kernel would not attach.
/// The help line of a kprobe the kernel would not attach.
fn kprobe_help(e: &AttachError) -> String {
    match e {
        AttachError::KprobeNotFound { func, .. } => {
            format!("check `weft -l 'kprobe:{func}*'`")
        }
        AttachError::KprobeRefused { .. } => "the kernel does not probe functions on its kprobe blacklist (/sys/kernel/debug/kprobes/blacklist) or marked notrace, nor offsets inside an instruction: probe a caller, or a tracepoint".to_string(),
        _ => "kprobes need root, or CAP_PERFMON and CAP_BPF; as root, a kernel in lockdown (/sys/kernel/security/lockdown) refuses them".to_string(),
    }
}

/// One clear sentence (plus help) for what the kernel refused.
pub fn runtime_error(
    e: &RuntimeError,
    compiled: &codegen::Compiled,
    sources: &SourceMap,
) -> String {
    let d = match e {
        RuntimeError::Verifier { program, log, insn } => crate::pipeline::verifier_diagnostic(compiled, program, *insn, log),
        RuntimeError::Load(LoadError::Permission { .. }) => Diagnostic::error(e.to_string())
            .with_help("loading BPF programs needs root, or CAP_BPF and CAP_PERFMON (plus CAP_SYS_ADMIN on older kernels)"),
        RuntimeError::Attach(AttachError::Permission { capability, .. }) => {
            Diagnostic::error(e.to_string()).with_help(format!("run weft as root or grant it {capability}"))
        }
        RuntimeError::Attach(AttachError::TracefsUnavailable { .. }) => Diagnostic::error(e.to_string())
            .with_help("mount tracefs with: mount -t tracefs nodev /sys/kernel/tracing"),
        RuntimeError::Attach(AttachError::TracepointNotFound { probe }) => Diagnostic::error(e.to_string())
            .with_help(format!("list tracepoints with: weft -l '{}*'", probe.rsplit_once(':').map_or("", |(p, _)| p))),
        RuntimeError::Attach(a @ (AttachError::KprobeNotFound { .. } | AttachError::KprobeRefused { .. } | AttachError::KprobePermission { .. })) => {
            Diagnostic::error(e.to_string()).with_help(kprobe_help(a))
        }
        _ => Diagnostic::error(e.to_string()),
    };
    render(&d, sources)
}

/// An I/O error as the C library words it (`No such file or directory`),
/// without Rust's `(os error 2)`.
pub fn io_reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}
