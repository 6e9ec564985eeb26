//! Profiles: stacks with a weight (samples, or time off the CPU), built from
//! stack-keyed map entries or read from text, and written as folded stacks
//! ([`folded`], which the cli draws as flame graph SVGs with `inferno`) or
//! gzipped pprof protobufs ([`pprof`]). [`bpftrace_text`] reads bpftrace's
//! own printed stack maps.
//!
//! Everything here is pure: the frames arrive already symbolized (the cli
//! resolves them through the runtime), and writers take any `impl Write`.

pub mod bpftrace_text;
pub mod folded;
pub mod pprof;

use abi::Layout;

use crate::stack::Stack;
use crate::value::{Integer, MapEntryValue, Value};

/// What code a frame is in; it decides the `_[k]`/`_[j]` annotation of
/// folded stacks and the colour of a flame graph's frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameKind {
    User,
    Kernel,
    /// Code a JIT runtime generated, named by its `/tmp/perf-PID.map`.
    Jit,
}

/// One resolved frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileFrame {
    /// The symbol's name without offset; `None` when it did not resolve.
    pub name: Option<String>,
    pub kind: FrameKind,
    /// The address (0 when read from text).
    pub addr: u64,
    /// The file it lives in (user frames), `[kernel.kallsyms]` or a module.
    pub module: Option<String>,
}

impl ProfileFrame {
    pub fn named(name: &str, kind: FrameKind) -> ProfileFrame {
        ProfileFrame {
            name: Some(name.to_string()),
            kind,
            addr: 0,
            module: None,
        }
    }
}

/// What a key element of a stack-keyed map stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRole {
    KernelStack,
    UserStack,
    Comm,
    /// The process id: a pprof label, left out of folded stacks (as bcc does).
    Pid,
    /// Another integer key (a script's `pid` or `tid`), shown after the
    /// comm as perf's stackcollapse does: `comm-N` (or `comm-N/M`).
    Int,
    /// Anything else: the map is no profile.
    Other,
}

/// The roles of a map key's elements, inferred from its layout: stacks by
/// kind, the first string as the comm, integers as [`KeyRole::Int`].
/// `None` unless the key holds a stack and nothing a profile cannot show.
pub fn key_roles(key: Option<&Layout>) -> Option<Vec<KeyRole>> {
    let role = |l: &Layout, comm_seen: &mut bool| match l {
        Layout::KStack { .. } => KeyRole::KernelStack,
        Layout::UStack { .. } => KeyRole::UserStack,
        Layout::Str { .. } if !*comm_seen => {
            *comm_seen = true;
            KeyRole::Comm
        }
        Layout::Int { .. } => KeyRole::Int,
        _ => KeyRole::Other,
    };
    let mut comm_seen = false;
    let roles: Vec<KeyRole> = match key? {
        Layout::Tuple { fields, .. } => fields
            .iter()
            .map(|f| role(&f.layout, &mut comm_seen))
            .collect(),
        single => vec![role(single, &mut comm_seen)],
    };
    let stacks = roles
        .iter()
        .any(|r| matches!(r, KeyRole::KernelStack | KeyRole::UserStack));
    (stacks && !roles.contains(&KeyRole::Other)).then_some(roles)
}

/// One stack (kernel and user part) with its weight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileSample {
    pub comm: Option<String>,
    pub pid: Option<u32>,
    /// [`KeyRole::Int`] keys, in key order.
    pub ints: Vec<i64>,
    /// Innermost first.
    pub user: Vec<ProfileFrame>,
    /// Innermost first.
    pub kernel: Vec<ProfileFrame>,
    /// Samples, or the summed value (microseconds for off-CPU).
    pub value: u64,
    /// The map it came from, when a profile holds several.
    pub map: Option<String>,
}

/// `bpf_get_stackid`'s "no stack here" (a user-mode sample's kernel stack,
/// a kernel thread's user stack): an empty stack, not a loss.
const EFAULT: i64 = 14;

/// The frames of a stack value; a stack lost to a full map or a hash
/// collision is one `[Missed Kernel Stack]` frame (bcc's words), so the
/// picture shows the loss that the run also reports.
fn stack_frames(stack: &Stack, kind: FrameKind) -> Vec<ProfileFrame> {
    if stack.id < 0 {
        if stack.id == -EFAULT {
            return Vec::new();
        }
        let missed = if stack.user {
            "[Missed User Stack]"
        } else {
            "[Missed Kernel Stack]"
        };
        return vec![ProfileFrame::named(missed, kind)];
    }
    let frames: Vec<&crate::stack::Frame> =
        stack.frames.iter().take_while(|f| f.addr != 0).collect();
    // A tracing program's own frames (bpf_prog_…, bpf_trace_run4, …) sit on
    // top of the kernel stack it captured: the picture starts below them.
    fn name(f: &crate::stack::Frame) -> &str {
        f.symbol.as_ref().map_or("", |s| s.name.as_str())
    }
    let skip = if kind == FrameKind::Kernel
        && frames
            .first()
            .is_some_and(|f| name(f).starts_with("bpf_prog_"))
    {
        frames
            .iter()
            .take_while(|f| is_tracing_frame(name(f)))
            .count()
    } else {
        0
    };
    frames[skip..]
        .iter()
        .map(|f| {
            let module = f.symbol.as_ref().and_then(|s| s.module.clone());
            let jit = kind == FrameKind::User
                && module
                    .as_deref()
                    .is_some_and(|m| m.starts_with("/tmp/perf-") && m.ends_with(".map"));
            ProfileFrame {
                name: f.symbol.as_ref().map(|s| s.name.clone()),
                kind: if jit { FrameKind::Jit } else { kind },
                addr: f.addr,
                module,
            }
        })
        .collect()
}

/// The kernel's machinery between an event and the BPF program it runs.
fn is_tracing_frame(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "bpf_prog_",
        "bpf_trace_run",
        "__bpf_trace_",
        "__traceiter_",
        "trace_call_bpf",
        "perf_trace_",
        "perf_tp_event",
        "bpf_trampoline_",
        "__bpf_prog_enter",
        "bpf_dispatcher_",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The weight of an entry: counts and sums (negative sums count as 0);
/// other aggregations are no profile weight.
pub fn entry_weight(value: &MapEntryValue) -> Option<u64> {
    match value {
        MapEntryValue::Count(n) => Some(*n),
        MapEntryValue::Sum(Integer::Unsigned(v)) => Some(*v),
        MapEntryValue::Sum(Integer::Signed(v)) => Some((*v).max(0) as u64),
        _ => None,
    }
}

/// A sample from a decoded, resolved map entry whose key has `roles`.
pub fn sample_from_entry(
    roles: &[KeyRole],
    key: &[Value],
    value: &MapEntryValue,
) -> Option<ProfileSample> {
    let weight = entry_weight(value)?;
    // A single-element key is decoded as one value, a tuple key as its items.
    let items: &[Value] = match key {
        [Value::Tuple(items)] if roles.len() > 1 => items,
        _ => key,
    };
    let mut sample = ProfileSample {
        comm: None,
        pid: None,
        ints: Vec::new(),
        user: Vec::new(),
        kernel: Vec::new(),
        value: weight,
        map: None,
    };
    for (role, item) in roles.iter().zip(items) {
        match (role, item) {
            (KeyRole::KernelStack, Value::Stack(s)) => {
                sample.kernel = stack_frames(s, FrameKind::Kernel)
            }
            (KeyRole::UserStack, Value::Stack(s)) => sample.user = stack_frames(s, FrameKind::User),
            (KeyRole::Comm, Value::Str(bytes)) => {
                sample.comm = Some(String::from_utf8_lossy(bytes).into_owned())
            }
            (KeyRole::Pid, v) => sample.pid = u32::try_from(v.as_bits()).ok(),
            (KeyRole::Int, Value::Int(v)) => sample.ints.push(*v),
            (KeyRole::Int, Value::UInt(v)) => sample.ints.push(*v as i64),
            _ => return None,
        }
    }
    Some(sample)
}

/// What the weights are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileKind {
    /// Samples of a timer firing every `period_ns` on each CPU.
    OnCpu { period_ns: u64 },
    /// Microseconds spent off the CPU.
    OffCpu,
    /// Counts (`count()`) or sums of whatever a script summed.
    Values { counts: bool },
}

/// Where a profile came from, for titles and pprof headers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileInfo {
    pub kind: ProfileKind,
    pub title: String,
    /// The command line that made it (the SVG's subtitle, a pprof comment).
    pub command_line: String,
    /// When it started (ns since the Unix epoch) and how long it ran.
    pub start_unix_ns: u64,
    pub duration_ns: u64,
}

impl ProfileInfo {
    /// The unit of a weight, as flame graphs name it.
    pub fn unit(&self) -> &'static str {
        match self.kind {
            ProfileKind::OnCpu { .. } => "samples",
            ProfileKind::OffCpu => "us",
            ProfileKind::Values { counts: true } => "samples",
            ProfileKind::Values { counts: false } => "units",
        }
    }
}

/// Samples and what they measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub info: ProfileInfo,
    pub samples: Vec<ProfileSample>,
}

impl Profile {
    /// The sum of every sample's weight.
    pub fn total(&self) -> u64 {
        self.samples
            .iter()
            .fold(0u64, |t, s| t.saturating_add(s.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stack::{Frame, Symbol};
    use abi::{Field, StackMode};

    fn stack(user: bool, id: i64, names: &[&str]) -> Value {
        Value::Stack(Box::new(Stack {
            user,
            mode: StackMode::Bpftrace,
            limit: 127,
            id,
            pid: 7,
            frames: names
                .iter()
                .enumerate()
                .map(|(i, n)| Frame {
                    addr: 0x1000 + i as u64,
                    symbol: (!n.is_empty()).then(|| Symbol {
                        name: n.to_string(),
                        offset: 3,
                        module: None,
                    }),
                    file: None,
                })
                .collect(),
        }))
    }

    #[test]
    fn roles_come_from_the_key_layout() {
        let tuple = Layout::Tuple {
            fields: vec![
                Field {
                    offset: 0,
                    layout: Layout::KStack {
                        mode: StackMode::Bpftrace,
                        limit: 127,
                    },
                },
                Field {
                    offset: 8,
                    layout: Layout::UStack {
                        mode: StackMode::Bpftrace,
                        limit: 127,
                    },
                },
                Field {
                    offset: 24,
                    layout: Layout::Str { size: 16 },
                },
                Field {
                    offset: 40,
                    layout: Layout::Int {
                        size: 8,
                        signed: false,
                    },
                },
            ],
            size: 48,
        };
        assert_eq!(
            key_roles(Some(&tuple)),
            Some(vec![
                KeyRole::KernelStack,
                KeyRole::UserStack,
                KeyRole::Comm,
                KeyRole::Int
            ])
        );
        assert_eq!(
            key_roles(Some(&Layout::KStack {
                mode: StackMode::Perf,
                limit: 5
            })),
            Some(vec![KeyRole::KernelStack])
        );
        // No stack, or something a profile cannot show: no profile.
        assert_eq!(key_roles(Some(&Layout::Str { size: 16 })), None);
        assert_eq!(key_roles(None), None);
    }

    #[test]
    fn entries_become_samples() {
        let roles = [KeyRole::KernelStack, KeyRole::UserStack, KeyRole::Comm];
        let key = vec![Value::Tuple(vec![
            stack(false, 1, &["schedule", "do_nanosleep"]),
            stack(true, -14, &[]),
            Value::str("weftwl"),
        ])];
        let s = sample_from_entry(&roles, &key, &MapEntryValue::Count(5)).unwrap();
        assert_eq!(s.comm.as_deref(), Some("weftwl"));
        assert_eq!(s.value, 5);
        assert_eq!(s.kernel.len(), 2);
        assert_eq!(s.kernel[0].name.as_deref(), Some("schedule"));
        assert!(s.user.is_empty(), "-EFAULT is an empty stack");
        // A collision (-EEXIST) shows as a missed stack.
        let key = vec![stack(false, -17, &[])];
        let s = sample_from_entry(&[KeyRole::KernelStack], &key, &MapEntryValue::Count(1)).unwrap();
        assert_eq!(s.kernel[0].name.as_deref(), Some("[Missed Kernel Stack]"));
        // Only counts and sums weigh.
        assert!(
            sample_from_entry(&[KeyRole::KernelStack], &key, &MapEntryValue::Hist(vec![]))
                .is_none()
        );
    }

    #[test]
    fn a_tracing_program_frames_are_left_out() {
        let key = vec![stack(
            false,
            1,
            &[
                "bpf_prog_d3e4_p0_sched_switch",
                "bpf_trace_run4",
                "__schedule",
                "schedule",
            ],
        )];
        let s = sample_from_entry(&[KeyRole::KernelStack], &key, &MapEntryValue::Count(1)).unwrap();
        let names: Vec<_> = s
            .kernel
            .iter()
            .map(|f| f.name.as_deref().unwrap())
            .collect();
        assert_eq!(names, ["__schedule", "schedule"]);
        // Only on top of the stack, and only under a BPF program.
        let key = vec![stack(false, 1, &["perf_trace_foo", "x"])];
        let s = sample_from_entry(&[KeyRole::KernelStack], &key, &MapEntryValue::Count(1)).unwrap();
        assert_eq!(s.kernel.len(), 2);
    }

    #[test]
    fn perf_map_frames_are_jit() {
        let mut v = stack(true, 1, &["LazyCompile:foo"]);
        if let Value::Stack(s) = &mut v {
            s.frames[0].symbol.as_mut().unwrap().module = Some("/tmp/perf-42.map".into());
        }
        let s = sample_from_entry(&[KeyRole::UserStack], &[v], &MapEntryValue::Count(1)).unwrap();
        assert_eq!(s.user[0].kind, FrameKind::Jit);
    }

    #[test]
    fn kernel_module_frames_keep_their_module() {
        // kallsyms names a module's function `ext4_foo [ext4]`: it folds as
        // any kernel frame and is its own mapping in pprof.
        let mut v = stack(false, 1, &["ext4_foo", "vfs_read"]);
        if let Value::Stack(s) = &mut v {
            s.frames[0].symbol.as_mut().unwrap().module = Some("[ext4]".into());
        }
        let roles = [KeyRole::KernelStack, KeyRole::Comm];
        let key = vec![Value::Tuple(vec![v, Value::str("cat")])];
        let s = sample_from_entry(&roles, &key, &MapEntryValue::Count(2)).unwrap();
        assert_eq!(s.kernel[0].kind, FrameKind::Kernel);
        assert_eq!(s.kernel[0].module.as_deref(), Some("[ext4]"));
        assert_eq!(
            folded::stack_line(&s, folded::FoldOptions::default()),
            "cat;vfs_read_[k];ext4_foo_[k]"
        );
        let profile = Profile {
            info: ProfileInfo {
                kind: ProfileKind::OnCpu { period_ns: 1000 },
                title: String::new(),
                command_line: String::new(),
                start_unix_ns: 0,
                duration_ns: 0,
            },
            samples: vec![s],
        };
        let p = pprof::to_proto(&profile);
        let mapping_of = |name: &str| {
            let f = p
                .function
                .iter()
                .find(|f| p.string_table[f.name as usize] == name)
                .unwrap();
            let loc = p
                .location
                .iter()
                .find(|l| l.line[0].function_id == f.id)
                .unwrap();
            let m = &p.mapping[loc.mapping_id as usize - 1];
            p.string_table[m.filename as usize].clone()
        };
        assert_eq!(mapping_of("ext4_foo"), "[ext4]");
        assert_eq!(mapping_of("vfs_read"), "[kernel.kallsyms]");
    }
}
