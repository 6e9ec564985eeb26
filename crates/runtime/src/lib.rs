//! The runtime: everything that touches the kernel for a compiled script.
//!
//! - [`Session`]: load an object (libbpf, from memory), run BEGIN/END with
//!   `BPF_PROG_TEST_RUN`, attach probes, drain the ring buffer, read maps.
//! - [`SessionReader`]: a session's maps and programs for another thread
//!   (the exporters read maps at scrape time).
//! - [`SysKernelInfo`]: [`ktypes::KernelInfo`] answered by the live kernel.
//! - [`tracefs`]: find or mount tracefs, read tracepoint descriptions.
//! - [`features`]: what this kernel supports (`weft --info`).
//!
//! Errors are typed per area ([`LoadError`], [`AttachError`], [`MapError`])
//! and joined in [`RuntimeError`]; only the cli adds help text. libbpf's own
//! messages never reach stderr: they are captured while loading and turned
//! into [`RuntimeError::Verifier`] or a load error's `log`.

mod attach;
pub mod cgroups;
pub mod clock;
mod error;
pub mod features;
pub mod host;
pub(crate) mod ifunc;
pub mod kernel_features;
mod kernel_info;
mod libbpf_log;
mod maps;
pub mod process;
mod reader;
mod ringbuf;
mod session;
pub mod signals;
mod skb_perf;
pub mod symbols;
mod sys;
pub mod tracefs;
pub mod usage;

pub use attach::iter::IteratorRun;
pub use error::{AttachError, LoadError, MapError, RuntimeError, SyscallError};
pub use features::{Capabilities, Features, Support};
pub use kernel_info::{SysKernelInfo, VMLINUX_BTF, vmlinux_btf};
pub use libbpf_log::{failing_insn, silence_libbpf};
pub use maps::{FlatEntries, MapEntry, PerCpu};
pub use reader::{ProgramStats, SessionReader};
pub use session::{BenchRun, LoadOptions, Session};
