//! Stack traces and symbols: how a captured stack is stored and which maps
//! hold the frames.
//!
//! A kernel stack value ([`crate::Layout::KStack`]) is the `u64` that
//! `bpf_get_stackid` returned: a stack id into the stack-trace map of its
//! frame limit ([`stack_map_name`]), or a negative errno when no stack was
//! captured (-EFAULT for a user-mode sample's kernel stack or a kernel
//! thread's user stack): such a stack prints empty. A user stack
//! ([`crate::Layout::UStack`]) is the same id followed by the `u64` pid that
//! user space needs to symbolize it. `ksym(addr)` ([`crate::Layout::KSym`]) is
//! the address; `usym(addr)` ([`crate::Layout::USym`]) the address and the pid.

/// How a stack prints (bpftrace's `StackMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StackMode {
    /// One `symbol+offset` per line, indented.
    Bpftrace,
    /// `\taddress symbol+offset (module)` per line, like `perf script`.
    Perf,
    /// The address in hex per line, unresolved.
    Raw,
    /// User stacks: the build id of the file each frame is in and the
    /// frame's offset in that file (`build_id 0xoffset`), what a symbolizer
    /// elsewhere needs; the address where no file with a build id maps it.
    BuildId,
}

impl StackMode {
    pub fn from_name(name: &str) -> Option<StackMode> {
        match name {
            "bpftrace" => Some(StackMode::Bpftrace),
            "perf" => Some(StackMode::Perf),
            "raw" => Some(StackMode::Raw),
            "build_id" => Some(StackMode::BuildId),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StackMode::Bpftrace => "bpftrace",
            StackMode::Perf => "perf",
            StackMode::Raw => "raw",
            StackMode::BuildId => "build_id",
        }
    }
}

/// bpftrace's default number of frames kept (the kernel's `perf_event_max_stack`).
pub const DEFAULT_STACK_LIMIT: u32 = 127;
/// The most frames a stack may ask for (bpftrace's `MAX_STACK_SIZE`).
pub const MAX_STACK_LIMIT: u32 = 1024;
/// `bpf_get_stackid` flag: capture the user stack instead of the kernel one.
pub const BPF_F_USER_STACK: u64 = 1 << 8;

/// One `BPF_MAP_TYPE_STACK_TRACE` map: key `u32` stack id, value `limit` `u64` addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackMapSpec {
    /// ELF symbol and kernel map name ([`stack_map_name`]).
    pub bpf_name: String,
    /// Frames kept per stack.
    pub limit: u32,
    pub max_entries: u32,
}

/// The stack-trace map that holds stacks of at most `limit` frames (kernel
/// and user stacks share it; the mode only changes how they print).
pub fn stack_map_name(limit: u32) -> String {
    format!("{STACK_MAP_PREFIX}{limit}")
}

/// What every stack map's name begins with (`stacks_127`).
pub const STACK_MAP_PREFIX: &str = "stacks_";

/// The record `send_ustack()` sends ([`crate::EventKind::UserStack`]): what
/// unwinding a user stack in user space needs, from the task's user
/// registers (`pt_regs` at its kernel entry, so a sample taken in the
/// kernel has them too):
///
/// | offset | field |
/// |---|---|
/// | 0 | `kind: u32`, `id: u32` (0) |
/// | 8 | `tid: u32`, `pid: u32` |
/// | 16 | `ip: u64` |
/// | 24 | `sp: u64` |
/// | 32 | `bp: u64` |
/// | 40 | `len: u32`: bytes copied; `flags: u32` ([`USTACK_COMPLETE`]) |
/// | 48 | `len` bytes of the stack from `sp` up |
pub struct UserStackCopy;

impl UserStackCopy {
    pub const TID: usize = 8;
    pub const PID: usize = 12;
    pub const IP: usize = 16;
    pub const SP: usize = 24;
    pub const BP: usize = 32;
    pub const LEN: usize = 40;
    pub const FLAGS: usize = 44;
    pub const BYTES: usize = 48;
}

/// The most stack bytes `send_ustack()` copies (perf's `--call-graph dwarf`
/// copies 8 KiB by default).
pub const USTACK_COPY_MAX: u32 = 16 * 1024;

/// [`UserStackCopy`] flag: the copy reached the top of the stack given
/// (nothing above it is the thread's), so a walk that needs more has
/// gone wrong rather than deeper.
pub const USTACK_COMPLETE: u32 = 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(stack_map_name(127), "stacks_127");
        assert!(stack_map_name(MAX_STACK_LIMIT).len() <= 15);
        assert_eq!(StackMode::from_name("perf"), Some(StackMode::Perf));
        assert_eq!(StackMode::from_name("raw"), Some(StackMode::Raw));
        assert_eq!(StackMode::from_name("nope"), None);
        assert_eq!(StackMode::Bpftrace.name(), "bpftrace");
    }
}
