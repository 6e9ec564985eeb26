//! Which kernel function tracing mechanisms a kernel has, as plain facts
//! with the reason when one is missing.
//!
//! `sema::mechanism` decides from these whether a `fentry`/`kprobe` probe
//! runs as written or through the other mechanism, and says what the kernel
//! lacks when neither can run; `runtime::SysKernelInfo` answers them by
//! probing the running kernel, [`crate::FixtureKernel`] by what the test says.

/// Whether a kernel feature is there, and if not, why (in words a user reads
/// after "this kernel cannot ...: ").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Support {
    Yes,
    No(String),
}

impl Support {
    pub fn is_yes(&self) -> bool {
        matches!(self, Support::Yes)
    }

    /// `Yes`, or `No(why_not)`.
    pub fn from_bool(ok: bool, why_not: &str) -> Support {
        if ok {
            Support::Yes
        } else {
            Support::No(why_not.to_string())
        }
    }

    /// Why it is missing (`None` when it is there).
    pub fn why_not(&self) -> Option<&str> {
        match self {
            Support::Yes => None,
            Support::No(why) => Some(why),
        }
    }
}

/// The three facts the choice between fentry and kprobe depends on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TracingFeatures {
    /// The kernel describes itself in BTF (`/sys/kernel/btf/vmlinux`):
    /// fentry needs it, and so do named arguments (`args->NAME`).
    pub btf: Support,
    /// BPF trampolines work: fentry/fexit programs load and attach.
    pub trampolines: Support,
    /// kprobes exist (CONFIG_KPROBES): kprobe/kretprobe attach.
    pub kprobes: Support,
}

impl TracingFeatures {
    /// A kernel with everything (what tests assume unless they say otherwise).
    pub const ALL: TracingFeatures = TracingFeatures {
        btf: Support::Yes,
        trampolines: Support::Yes,
        kprobes: Support::Yes,
    };

    /// From three yes/no facts, with the reasons a kernel would give.
    pub fn from_flags(btf: bool, trampolines: bool, kprobes: bool) -> TracingFeatures {
        TracingFeatures {
            btf: Support::from_bool(btf, "it has no BTF"),
            trampolines: Support::from_bool(
                trampolines,
                if btf {
                    "BPF trampolines do not work"
                } else {
                    "fentry needs kernel BTF"
                },
            ),
            kprobes: Support::from_bool(
                kprobes,
                "it was built without kprobes (CONFIG_KPROBES is off)",
            ),
        }
    }
}
