//! [`ktypes::KernelInfo`] answered by the running kernel.

use std::io;

use std::sync::OnceLock;

use ktypes::{
    Btf, KernelFunction, KernelInfo, KernelInfoError, TracepointFormat, parse_filter_functions,
    parse_format, parse_kallsyms_functions,
};

use crate::tracefs::Tracefs;

/// The live kernel. Reads nothing until asked; tracefs is found (or mounted)
/// on the first tracepoint question.
#[derive(Debug, Default, Clone)]
pub struct SysKernelInfo {
    /// `--debuginfo DIR`s: where separate and split debug files are looked for too.
    debuginfo_dirs: Vec<String>,
}

impl SysKernelInfo {
    pub fn new() -> SysKernelInfo {
        SysKernelInfo::default()
    }

    /// The same, with `--debuginfo` directories to find user binaries' DWARF in.
    pub fn with_debuginfo_dirs(dirs: Vec<String>) -> SysKernelInfo {
        SysKernelInfo {
            debuginfo_dirs: dirs,
        }
    }

    fn tracefs(&self) -> Result<&'static Tracefs, KernelInfoError> {
        Tracefs::shared().map_err(|e| KernelInfoError::Unavailable(e.to_string()))
    }
}

fn io_error(what: String, e: io::Error) -> KernelInfoError {
    match e.kind() {
        io::ErrorKind::NotFound => KernelInfoError::NotFound(what),
        _ => KernelInfoError::Unavailable(format!("{what}: {e}")),
    }
}

impl KernelInfo for SysKernelInfo {
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError> {
        let tracefs = self.tracefs()?;
        let text = tracefs.format(category, name).map_err(|e| {
            let what = match e.kind() {
                io::ErrorKind::NotFound => format!("tracepoint {category}:{name} not found"),
                _ => format!("cannot read the format of tracepoint {category}:{name}"),
            };
            io_error(what, e)
        })?;
        parse_format(&text)
    }

    fn tracepoints(&self) -> Result<Vec<(String, String)>, KernelInfoError> {
        let tracefs = self.tracefs()?;
        tracefs.tracepoints().map_err(|e| {
            KernelInfoError::Unavailable(format!(
                "cannot list tracepoints in tracefs ({tracefs}): {e}"
            ))
        })
    }

    fn read_file(&self, path: &str) -> Result<Vec<u8>, KernelInfoError> {
        std::fs::read(path).map_err(|e| io_error(path.to_string(), e))
    }

    fn ifunc_target(&self, path: &str, symbol: &str) -> Result<u64, KernelInfoError> {
        crate::ifunc::target(path, symbol)
    }

    fn btf(&self) -> Result<&Btf, KernelInfoError> {
        vmlinux_btf().map_err(Clone::clone)
    }

    /// Probed once per process (a program load for trampolines, two file
    /// checks for kprobes).
    fn tracing_features(&self) -> Option<ktypes::TracingFeatures> {
        static FEATURES: OnceLock<ktypes::TracingFeatures> = OnceLock::new();
        let features = FEATURES.get_or_init(|| ktypes::TracingFeatures {
            btf: match vmlinux_btf() {
                Ok(_) => crate::Support::Yes,
                Err(e) => crate::Support::No(format!("it has no BTF ({e})")),
            },
            trampolines: crate::kernel_features::trampolines(),
            kprobes: crate::Support::from_bool(
                crate::kernel_features::kprobes(),
                "it was built without kprobes (CONFIG_KPROBES is off)",
            ),
        });
        Some(features.clone())
    }

    /// Read and parsed once per process: every kprobe attach point asks,
    /// and the kernel takes tens of milliseconds to print ~80,000 names.
    fn kernel_functions(&self) -> Result<Vec<KernelFunction>, KernelInfoError> {
        static FUNCTIONS: OnceLock<Result<Vec<KernelFunction>, KernelInfoError>> = OnceLock::new();
        FUNCTIONS
            .get_or_init(|| {
                if let Ok(tracefs) = self.tracefs()
                    && let Ok(text) =
                        std::fs::read_to_string(tracefs.root().join("available_filter_functions"))
                {
                    return Ok(parse_filter_functions(&text));
                }
                let text = std::fs::read_to_string("/proc/kallsyms")
                    .map_err(|e| io_error("/proc/kallsyms".to_string(), e))?;
                Ok(parse_kallsyms_functions(&text))
            })
            .clone()
    }

    /// `stat /proc/self/ns/pid`, as bpftrace reads it (once per process).
    fn pid_namespace(&self) -> Option<ktypes::PidNamespace> {
        static NAMESPACE: OnceLock<Option<ktypes::PidNamespace>> = OnceLock::new();
        *NAMESPACE.get_or_init(|| {
            use std::os::unix::fs::MetadataExt;
            let m = std::fs::metadata("/proc/self/ns/pid").ok()?;
            let ns = ktypes::PidNamespace {
                dev: m.dev(),
                ino: m.ino(),
            };
            (!ns.is_init()).then_some(ns)
        })
    }

    fn cgroup_id(&self, path: &str) -> Result<u64, KernelInfoError> {
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(KernelInfoError::Unavailable(format!(
                    "{path} is not a cgroup directory"
                )));
            }
            Err(e) => return Err(io_error(path.to_string(), e)),
        }
        let c = std::ffi::CString::new(path)
            .map_err(|_| KernelInfoError::NotFound(format!("{path}: no such directory")))?;
        crate::sys::cgroup_id(&c).map_err(|e| KernelInfoError::Unavailable(format!("{path}: {e}")))
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, KernelInfoError> {
        let entries = std::fs::read_dir(path).map_err(|e| io_error(path.to_string(), e))?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        Ok(names)
    }

    fn debuginfo_dirs(&self) -> Vec<String> {
        self.debuginfo_dirs.clone()
    }

    fn executable_search_path(&self) -> Vec<String> {
        std::env::var("PATH")
            .unwrap_or_default()
            .split(':')
            .filter(|d| !d.is_empty())
            .map(String::from)
            .collect()
    }
}

/// Where the running kernel describes its types.
pub const VMLINUX_BTF: &str = "/sys/kernel/btf/vmlinux";

/// The kernel's BTF, read and indexed once, on first use.
pub fn vmlinux_btf() -> Result<&'static Btf, &'static KernelInfoError> {
    static BTF: OnceLock<Result<Btf, KernelInfoError>> = OnceLock::new();
    BTF.get_or_init(|| {
        let bytes = std::fs::read(VMLINUX_BTF).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => KernelInfoError::Unavailable(format!(
                "this kernel has no BTF ({VMLINUX_BTF}; it needs CONFIG_DEBUG_INFO_BTF)"
            )),
            _ => KernelInfoError::Unavailable(format!("cannot read {VMLINUX_BTF}: {e}")),
        })?;
        Btf::parse(bytes)
    })
    .as_ref()
}
