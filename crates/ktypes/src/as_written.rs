//! The kernel as `--emit-elf` and `-d` see it: every fact of the kernel
//! it wraps except which tracing mechanisms it has, so kernel function
//! probes compile as written (a kprobe stays a kprobe) for an object that
//! may be meant for another machine. Tests use it to load what this kernel
//! could not attach.

use crate::{Btf, KernelFunction, KernelInfo, KernelInfoError, TracepointFormat, TracingFeatures};

/// The kernel as `--emit-elf` and `-d` see it: probes are compiled as
/// written (a kprobe stays a kprobe), not fitted to, or refused for, what
/// this machine's kernel can attach; the object may be meant for another.
pub struct AsWritten<'a>(pub &'a dyn KernelInfo);

impl KernelInfo for AsWritten<'_> {
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError> {
        self.0.tracepoint_format(category, name)
    }

    fn tracepoints(&self) -> Result<Vec<(String, String)>, KernelInfoError> {
        self.0.tracepoints()
    }

    fn read_file(&self, path: &str) -> Result<Vec<u8>, KernelInfoError> {
        self.0.read_file(path)
    }

    fn ifunc_target(&self, path: &str, symbol: &str) -> Result<u64, KernelInfoError> {
        self.0.ifunc_target(path, symbol)
    }

    fn list_dir(&self, path: &str) -> Result<Vec<String>, KernelInfoError> {
        self.0.list_dir(path)
    }

    fn executable_search_path(&self) -> Vec<String> {
        self.0.executable_search_path()
    }

    fn btf(&self) -> Result<&Btf, KernelInfoError> {
        self.0.btf()
    }

    fn tracing_features(&self) -> Option<TracingFeatures> {
        None
    }

    fn kernel_functions(&self) -> Result<Vec<KernelFunction>, KernelInfoError> {
        self.0.kernel_functions()
    }

    fn pid_namespace(&self) -> Option<crate::PidNamespace> {
        self.0.pid_namespace()
    }

    fn cgroup_id(&self, path: &str) -> Result<u64, KernelInfoError> {
        self.0.cgroup_id(path)
    }

    fn memo(&self) -> Option<&crate::Memo> {
        self.0.memo()
    }
}
