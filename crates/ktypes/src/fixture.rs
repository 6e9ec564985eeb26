//! A [`KernelInfo`] made of canned answers, for tests that must not touch the kernel.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::{
    Btf, KernelFunction, KernelInfo, KernelInfoError, TracepointFormat, TracingFeatures,
    parse_format,
};

/// A kernel described by tracepoint format texts given by the test.
#[derive(Debug, Default, Clone)]
pub struct FixtureKernel {
    tracepoints: BTreeMap<(String, String), String>,
    files: BTreeMap<String, Vec<u8>>,
    /// `(path, symbol)` of an indirect function → its implementation's address.
    ifuncs: BTreeMap<(String, String), u64>,
    btf: Option<Arc<Btf>>,
    kernel_functions: Option<Vec<KernelFunction>>,
    tracing_features: Option<TracingFeatures>,
    /// Cgroup directory → id.
    cgroups: BTreeMap<String, u64>,
    pid_namespace: Option<crate::PidNamespace>,
}

impl FixtureKernel {
    pub fn new() -> FixtureKernel {
        FixtureKernel::default()
    }

    /// Adds `tracepoint:category:name` with the given `format` file text.
    pub fn with_tracepoint(mut self, category: &str, name: &str, format: &str) -> FixtureKernel {
        self.tracepoints
            .insert((category.into(), name.into()), format.into());
        self
    }

    /// Makes weft run in a nested pid namespace (`dev`, `ino` of its
    /// `/proc/self/ns/pid`).
    pub fn with_pid_namespace(mut self, dev: u64, ino: u64) -> FixtureKernel {
        self.pid_namespace = Some(crate::PidNamespace { dev, ino });
        self
    }

    /// Adds a file that [`KernelInfo::read_file`] returns (a binary for uprobe tests).
    pub fn with_file(mut self, path: &str, bytes: Vec<u8>) -> FixtureKernel {
        self.files.insert(path.into(), bytes);
        self
    }

    /// Makes the indirect function `symbol` of `path` resolve to `address`
    /// (see [`KernelInfo::ifunc_target`]).
    pub fn with_ifunc(mut self, path: &str, symbol: &str, address: u64) -> FixtureKernel {
        self.ifuncs.insert((path.into(), symbol.into()), address);
        self
    }

    /// Adds kernel BTF (see [`crate::btf::BtfBuilder`]); panics on a malformed blob,
    /// which is a bug in the test.
    pub fn with_btf(mut self, bytes: Vec<u8>) -> FixtureKernel {
        self.btf = Some(Arc::new(
            Btf::parse(bytes).expect("fixture BTF must be well formed"),
        ));
        self
    }

    /// Says which of fentry and kprobes this kernel has; without it, kernel
    /// function probes compile as written.
    pub fn with_tracing_features(mut self, features: TracingFeatures) -> FixtureKernel {
        self.tracing_features = Some(features);
        self
    }

    /// Sets the kernel functions kprobes may name (`name` or `module:name`).
    pub fn with_kernel_functions(mut self, names: &[&str]) -> FixtureKernel {
        let mut v: Vec<KernelFunction> = names
            .iter()
            .map(|n| match n.split_once(':') {
                Some((m, f)) => KernelFunction {
                    name: f.into(),
                    module: Some(m.into()),
                },
                None => KernelFunction {
                    name: (*n).into(),
                    module: None,
                },
            })
            .collect();
        v.sort();
        self.kernel_functions = Some(v);
        self
    }

    /// Adds a cgroup directory with its id (see [`KernelInfo::cgroup_id`]).
    pub fn with_cgroup(mut self, dir: &str, id: u64) -> FixtureKernel {
        self.cgroups.insert(dir.into(), id);
        self
    }

    /// A small kernel with the syscall and scheduler tracepoints that tests use,
    /// copied from a 6.x x86_64 kernel's tracefs.
    pub fn typical() -> FixtureKernel {
        let mut k = FixtureKernel::new();
        for (cat, name, fields) in TYPICAL {
            let text = format!(
                "name: {name}\nID: 1\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n{fields}\nprint fmt: \"\"\n"
            );
            k = k.with_tracepoint(cat, name, &text);
        }
        k.with_btf(crate::btf::fixture_btf())
            .with_kernel_functions(&[
                "vfs_read",
                "vfs_readv",
                "vfs_write",
                "do_sys_openat2",
                "ksys_read",
                "ext4:ext4_file_open",
            ])
    }
}

const SYS_NR: &str = "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n";

const TYPICAL: &[(&str, &str, &str)] = &[
    (
        "syscalls",
        "sys_enter_openat",
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n",
    ),
    (
        "syscalls",
        "sys_exit_openat",
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n",
    ),
    (
        "syscalls",
        "sys_enter_read",
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:char * buf;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n",
    ),
    (
        "syscalls",
        "sys_exit_read",
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n",
    ),
    ("syscalls", "sys_enter_getppid", SYS_NR),
    (
        "syscalls",
        "sys_exit_getppid",
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n",
    ),
    (
        "syscalls",
        "sys_enter_execve",
        "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:const char * filename;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:const char *const * argv;\toffset:24;\tsize:8;\tsigned:0;\n\tfield:const char *const * envp;\toffset:32;\tsize:8;\tsigned:0;\n",
    ),
    (
        "raw_syscalls",
        "sys_enter",
        "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n",
    ),
    (
        "sched",
        "sched_switch",
        "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n",
    ),
    (
        "sched",
        "sched_wakeup",
        "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n",
    ),
    (
        "block",
        "block_rq_issue",
        "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;\n\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n",
    ),
];

impl KernelInfo for FixtureKernel {
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError> {
        let text = self
            .tracepoints
            .get(&(category.to_string(), name.to_string()))
            .ok_or_else(|| {
                KernelInfoError::NotFound(format!("tracepoint:{category}:{name} does not exist"))
            })?;
        parse_format(text)
    }

    fn tracepoints(&self) -> Result<Vec<(String, String)>, KernelInfoError> {
        Ok(self.tracepoints.keys().cloned().collect())
    }

    fn btf(&self) -> Result<&Btf, KernelInfoError> {
        self.btf.as_deref().ok_or_else(|| {
            KernelInfoError::Unavailable("this kernel has no BTF (/sys/kernel/btf/vmlinux)".into())
        })
    }

    fn tracing_features(&self) -> Option<TracingFeatures> {
        self.tracing_features.clone()
    }

    fn kernel_functions(&self) -> Result<Vec<KernelFunction>, KernelInfoError> {
        self.kernel_functions.clone().ok_or_else(|| {
            KernelInfoError::Unavailable("the list of kernel functions is not available".into())
        })
    }

    fn read_file(&self, path: &str) -> Result<Vec<u8>, KernelInfoError> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| KernelInfoError::NotFound(format!("{path}: no such file")))
    }

    /// The fixture's files under `path`, one level down.
    fn list_dir(&self, path: &str) -> Result<Vec<String>, KernelInfoError> {
        let dir = format!("{}/", path.trim_end_matches('/'));
        let mut names: Vec<String> = self
            .files
            .keys()
            .filter_map(|f| f.strip_prefix(&dir))
            .map(|rest| rest.split('/').next().unwrap_or(rest).to_string())
            .collect();
        names.dedup();
        if names.is_empty() {
            return Err(KernelInfoError::NotFound(format!(
                "{path}: no such directory"
            )));
        }
        Ok(names)
    }

    fn pid_namespace(&self) -> Option<crate::PidNamespace> {
        self.pid_namespace
    }

    fn cgroup_id(&self, path: &str) -> Result<u64, KernelInfoError> {
        self.cgroups
            .get(path)
            .copied()
            .ok_or_else(|| KernelInfoError::NotFound(format!("{path}: no such cgroup")))
    }

    fn ifunc_target(&self, path: &str, symbol: &str) -> Result<u64, KernelInfoError> {
        self.ifuncs
            .get(&(path.to_string(), symbol.to_string()))
            .copied()
            .ok_or_else(|| {
                KernelInfoError::Unavailable(format!("{path} is not loaded in this process"))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typical_fixture_parses() {
        let k = FixtureKernel::typical();
        for (cat, name) in k.tracepoints().unwrap() {
            k.tracepoint_format(&cat, &name).unwrap();
        }
        let f = k.tracepoint_format("syscalls", "sys_enter_openat").unwrap();
        assert_eq!(f.field("filename").unwrap().offset, 24);
        assert!(k.tracepoint_format("nope", "nope").is_err());
    }
}
