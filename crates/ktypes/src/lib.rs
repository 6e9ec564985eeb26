//! Facts about the running kernel that the compiler needs, behind one trait.
//!
//! Parsers here take text or bytes, never paths: `runtime::SysKernelInfo`
//! reads the files, tests use [`FixtureKernel`].

#![forbid(unsafe_code)]

mod as_written;
pub mod btf;
pub mod cgroup;
mod features;
mod fixture;
mod kfuncs;
mod memo;
mod tracepoint_format;

pub use as_written::AsWritten;
pub use btf::{Btf, BtfFunction, BtfParam};
pub use features::{Support, TracingFeatures};
pub use fixture::FixtureKernel;
pub use kfuncs::{
    KernelFunction, KernelSymbol, kallsyms_address, parse_filter_functions,
    parse_kallsyms_functions,
};
pub use memo::{Memo, Memoized};
pub use tracepoint_format::{FieldKind, TpField, TracepointFormat, parse_format};

/// Why a kernel fact could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelInfoError {
    /// The thing asked for does not exist on this kernel (unknown tracepoint, ...).
    NotFound(String),
    /// It may exist but could not be read (tracefs not mounted, permission, ...).
    Unavailable(String),
    /// The kernel's description could not be parsed.
    Malformed(String),
}

impl std::fmt::Display for KernelInfoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelInfoError::NotFound(s)
            | KernelInfoError::Unavailable(s)
            | KernelInfoError::Malformed(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for KernelInfoError {}

/// The pid namespace weft runs in, as `stat /proc/self/ns/pid` names it
/// (what `bpf_get_ns_current_pid_tgid` takes to give pids as seen there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PidNamespace {
    pub dev: u64,
    pub ino: u64,
}

impl PidNamespace {
    /// The inode of the initial pid namespace (`PROC_PID_INIT_INO` in the
    /// kernel's `proc_ns.h`): every other one is a nested namespace.
    pub const INIT_INO: u64 = 0xefff_fffc;

    /// Whether this is the initial pid namespace.
    pub fn is_init(&self) -> bool {
        self.ino == PidNamespace::INIT_INO
    }
}

/// What the compiler may ask about the kernel it compiles for.
pub trait KernelInfo {
    /// The argument layout of `tracepoint:category:name`.
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError>;

    /// [`KernelInfo::tracepoint_format`], shared: a memoizing kernel hands
    /// every probe of one tracepoint the same copy.
    fn tracepoint_format_shared(
        &self,
        category: &str,
        name: &str,
    ) -> Result<std::sync::Arc<TracepointFormat>, KernelInfoError> {
        self.tracepoint_format(category, name)
            .map(std::sync::Arc::new)
    }

    /// Every tracepoint as `(category, name)`, sorted; used to expand wildcards and for `-l`.
    fn tracepoints(&self) -> Result<Vec<(String, String)>, KernelInfoError>;

    /// The bytes of a file on the traced system: an executable or library
    /// for uprobes and USDT, `/etc/ld.so.cache`, `/proc/PID/maps`.
    fn read_file(&self, path: &str) -> Result<Vec<u8>, KernelInfoError> {
        Err(KernelInfoError::NotFound(format!("{path}: no such file")))
    }

    /// Where calls to the indirect function `symbol` of the library at
    /// `path` land on this machine: the implementation's address as linked
    /// in that file (what its resolver picked when the library was loaded).
    fn ifunc_target(&self, path: &str, symbol: &str) -> Result<u64, KernelInfoError> {
        Err(KernelInfoError::Unavailable(format!(
            "cannot resolve the indirect function `{symbol}` of {path} here"
        )))
    }

    /// The names in directory `path` (not `.` and `..`), sorted: where a
    /// wildcard in a uprobe's or USDT probe's file name is matched.
    fn list_dir(&self, path: &str) -> Result<Vec<String>, KernelInfoError> {
        Err(KernelInfoError::Unavailable(format!(
            "cannot list the directory {path} here"
        )))
    }

    /// The directories of `$PATH`, where a program named without a `/` is looked up.
    fn executable_search_path(&self) -> Vec<String> {
        Vec::new()
    }

    /// Directories given with `--debuginfo`, where a user binary's separate
    /// debug file, `.dwo` and `.dwp` files are looked for too.
    fn debuginfo_dirs(&self) -> Vec<String> {
        Vec::new()
    }

    /// The kernel's BTF (`/sys/kernel/btf/vmlinux`), read on first use:
    /// fentry/fexit parameters, typed raw tracepoint arguments, struct layouts.
    fn btf(&self) -> Result<&Btf, KernelInfoError> {
        Err(KernelInfoError::Unavailable(
            "this kernel has no BTF (/sys/kernel/btf/vmlinux)".into(),
        ))
    }

    /// Which of fentry (BPF trampolines) and kprobes this kernel has, or
    /// `None` when unknown: then kernel function probes compile as written.
    fn tracing_features(&self) -> Option<TracingFeatures> {
        None
    }

    /// Kernel functions a kprobe can attach to, sorted (for wildcards and `-l`).
    fn kernel_functions(&self) -> Result<Vec<KernelFunction>, KernelInfoError> {
        Err(KernelInfoError::Unavailable(
            "the list of kernel functions is not available".into(),
        ))
    }

    /// Where results worked out once per compilation are kept (the user
    /// binaries uprobes name); `None`: work each out again.
    fn memo(&self) -> Option<&Memo> {
        None
    }

    /// The id of the cgroup whose directory is `path` (what
    /// `bpf_get_current_cgroup_id()` gives for a task in it); `NotFound`
    /// when there is no such directory.
    fn cgroup_id(&self, path: &str) -> Result<u64, KernelInfoError> {
        Err(KernelInfoError::Unavailable(format!(
            "cannot look up the cgroup id of {path} here"
        )))
    }

    /// The pid namespace weft itself runs in, when it is not the initial
    /// one: then `pid`, `tid` and the pids of user stacks are the ones seen
    /// from there, as bpftrace gives them. `None`: the initial namespace
    /// (or unknown), where the kernel's own ids are those.
    fn pid_namespace(&self) -> Option<PidNamespace> {
        None
    }
}
