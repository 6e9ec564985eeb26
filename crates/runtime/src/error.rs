//! Typed errors, one enum per area, joined into [`RuntimeError`].
//!
//! Every error keeps the failing call and its `errno` (as an [`io::Error`]).
//! No help text here: only the cli turns these into diagnostics with advice.

use std::io;

use thiserror::Error;

/// A failed system or libbpf call: its name and the OS error it returned.
#[derive(Debug, Error)]
#[error("{call}: {source}")]
pub struct SyscallError {
    /// The call that failed (`perf_event_open`, `bpf_map_lookup_elem`, ...).
    pub call: &'static str,
    #[source]
    pub source: io::Error,
}

impl SyscallError {
    pub(crate) fn new(call: &'static str, source: io::Error) -> SyscallError {
        SyscallError { call, source }
    }

    /// From a libbpf-style return value `-errno`.
    pub(crate) fn from_neg(call: &'static str, ret: i64) -> SyscallError {
        SyscallError::new(call, io::Error::from_raw_os_error((-ret) as i32))
    }

    /// The errno, when the error came from the kernel.
    pub fn errno(&self) -> Option<i32> {
        self.source.raw_os_error()
    }
}

/// Opening or loading the object failed (other than a verifier rejection,
/// which is [`RuntimeError::Verifier`]).
#[derive(Debug, Error)]
pub enum LoadError {
    /// libbpf could not parse the ELF object.
    #[error("cannot open BPF object: {source}")]
    Open {
        source: SyscallError,
        /// libbpf's warnings, which say what it did not like.
        log: String,
    },
    /// The kernel refused to load a program for lack of privilege
    /// (`CAP_BPF`, plus `CAP_PERFMON` for tracing programs).
    #[error("loading BPF program `{program}` was not permitted: {source}")]
    Permission {
        program: String,
        source: SyscallError,
        log: String,
    },
    /// Loading failed for another reason (map creation, BTF, ...).
    #[error("cannot load BPF object{}: {source}", program.as_ref().map(|p| format!(" (program `{p}`)")).unwrap_or_default())]
    Load {
        program: Option<String>,
        source: SyscallError,
        log: String,
    },
    /// The manifest names a program the object does not contain.
    #[error("program `{0}` is in the manifest but not in the object")]
    MissingProgram(String),
    /// The manifest names a map the object does not contain.
    #[error("map `{0}` is in the manifest but not in the object")]
    MissingMap(String),
    /// Writing an initial map value (globals) failed.
    #[error("cannot initialise map `{map}`: {source}")]
    Init { map: String, source: SyscallError },
    /// Setting up the ring-buffer consumer (mmap, epoll) failed.
    #[error("cannot set up the ring buffer: {0}")]
    Ringbuf(SyscallError),
}

/// Attaching one probe failed. Every variant names the probe as the user wrote it.
#[derive(Debug, Error)]
pub enum AttachError {
    /// `tracepoint:category:name` does not exist on this kernel (`ENOENT`).
    #[error("{probe}: no such tracepoint")]
    TracepointNotFound { probe: String },
    /// tracefs could not be found or mounted, so tracepoints cannot be resolved.
    #[error("{probe}: tracefs is unavailable: {source}")]
    TracefsUnavailable {
        probe: String,
        source: crate::tracefs::TracefsError,
    },
    /// `EPERM`/`EACCES`: the named capability is missing.
    #[error("{probe}: permission denied ({capability} needed): {source}")]
    Permission {
        probe: String,
        capability: &'static str,
        source: SyscallError,
    },
    /// The kind of event is not supported by this kernel (`ENOENT`/`EOPNOTSUPP` on a PMU, ...).
    #[error("{probe}: not supported by this kernel: {source}")]
    Unsupported { probe: String, source: SyscallError },
    /// A `hardware:` event on a machine without a CPU PMU (no
    /// `/sys/bus/event_source/devices/cpu`, or the kernel answered ENOENT/EOPNOTSUPP).
    #[error(
        "{probe}: this machine has no hardware performance counters (no CPU PMU in /sys/bus/event_source/devices), so hardware events cannot be sampled; use a software event such as software:cpu-clock instead"
    )]
    NoPmu { probe: String },
    /// Any other failure.
    #[error("{probe}: {source}")]
    Other { probe: String, source: SyscallError },
    /// The manifest names a program the object does not contain.
    #[error("{probe}: program `{program}` is not in the object")]
    MissingProgram { probe: String, program: String },
    /// kprobe, `ENOENT`: the kernel has no such function, or ftrace cannot
    /// patch it (not in `available_filter_functions`).
    #[error("{probe}: no such kernel function, or it cannot be probed")]
    KprobeNotFound { probe: String, func: String },
    /// kprobe, `EINVAL`: the kernel refused the place (a blacklisted or
    /// `notrace` function, or an offset inside an instruction).
    #[error(
        "{probe}: the kernel refused a kprobe on `{func}`{}",
        if *offset == 0 { String::new() } else { format!(" at offset {offset}") }
    )]
    KprobeRefused {
        probe: String,
        func: String,
        offset: u64,
    },
    /// uprobe: the instruction at this place cannot be single-stepped
    /// safely. The kernel refuses some (`ENOTSUPP`); weft itself refuses
    /// vector-encoded ones (VEX/EVEX, which begin many of glibc's string
    /// functions), which some kernels accept and then step wrongly.
    /// `next` is the probe on the instruction after it, when its length is
    /// known (a guessed offset inside the instruction would corrupt it).
    #[error(
        "{probe}: {why} (offset {offset:#x} of {path}); {}",
        match next {
            Some(next) => format!("probe the next instruction, {next}, or a caller instead"),
            None => "probe a caller instead".to_string(),
        }
    )]
    UprobeRefused {
        probe: String,
        path: String,
        offset: u64,
        why: &'static str,
        next: Option<String>,
    },
    /// kprobe, `EPERM`/`EACCES`: no capability, or the kernel forbids kprobes
    /// (lockdown).
    #[error("{probe}: the kernel did not permit this kprobe (permission denied)")]
    KprobePermission { probe: String },
}

impl AttachError {
    /// The probe this error is about.
    pub fn probe(&self) -> &str {
        match self {
            AttachError::TracepointNotFound { probe }
            | AttachError::TracefsUnavailable { probe, .. }
            | AttachError::Permission { probe, .. }
            | AttachError::Unsupported { probe, .. }
            | AttachError::Other { probe, .. }
            | AttachError::NoPmu { probe }
            | AttachError::MissingProgram { probe, .. }
            | AttachError::KprobeNotFound { probe, .. }
            | AttachError::KprobeRefused { probe, .. }
            | AttachError::UprobeRefused { probe, .. }
            | AttachError::KprobePermission { probe } => probe,
        }
    }
}

/// Reading or writing a map failed.
#[derive(Debug, Error)]
pub enum MapError {
    /// No map of that name (script name `@x` or kernel name) in the object.
    #[error("no map named `{0}`")]
    NotFound(String),
    /// A map syscall failed.
    #[error("map `{map}`: {source}")]
    Syscall { map: String, source: SyscallError },
}

/// Everything the runtime can fail with.
#[derive(Debug, Error)]
pub enum RuntimeError {
    /// The verifier rejected `program`. `insn` is the index (in 8-byte
    /// instruction slots, as the kernel counts them) of the failing
    /// instruction, parsed from `log`, the verifier's log.
    #[error("the BPF verifier rejected program `{program}`{}", insn.map(|i| format!(" at instruction {i}")).unwrap_or_default())]
    Verifier {
        program: String,
        log: String,
        insn: Option<usize>,
    },
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Attach(#[from] AttachError),
    #[error(transparent)]
    Map(#[from] MapError),
    /// Running a BEGIN/END program with `BPF_PROG_TEST_RUN` failed.
    #[error("running {probe} (program `{program}`): {source}")]
    TestRun {
        program: String,
        probe: String,
        source: SyscallError,
    },
    /// Reading a BPF iterator (`iter:` probe) failed.
    #[error("running {probe}: {source}")]
    Iterate { probe: String, source: SyscallError },
    /// Waiting on the ring buffer failed.
    #[error("polling the ring buffer: {0}")]
    Poll(SyscallError),
}
