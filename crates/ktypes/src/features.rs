//! Which kernel function tracing mechanisms a kernel has, as plain facts.
//!
//! `sema::mechanism` decides from these whether a `fentry`/`kprobe` probe
//! runs as written or through the other mechanism; `runtime::SysKernelInfo`
//! answers them by probing the running kernel, [`crate::FixtureKernel`] by
//! what the test says.

/// The three facts the choice between fentry and kprobe depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TracingFeatures {
    /// The kernel describes itself in BTF (`/sys/kernel/btf/vmlinux`):
    /// fentry needs it, and so do named arguments (`args->NAME`).
    pub btf: bool,
    /// BPF trampolines work: fentry/fexit programs load and attach.
    pub trampolines: bool,
    /// kprobes exist (CONFIG_KPROBES): kprobe/kretprobe attach.
    pub kprobes: bool,
}

impl TracingFeatures {
    /// A kernel with everything (what tests assume unless they say otherwise).
    pub const ALL: TracingFeatures = TracingFeatures {
        btf: true,
        trampolines: true,
        kprobes: true,
    };
}
