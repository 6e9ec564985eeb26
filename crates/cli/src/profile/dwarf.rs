//! User stacks unwound in user space (`weft profile`/`offcpu` by default):
//! each sample's program sends the user registers and stack bytes
//! (`send_ustack()`), then `print((tid, pid, comm, kstack, weight))`. The
//! copy is unwound as it arrives (while the process lives, its mappings
//! readable) by `runtime::symbols::Unwinder`; the print joins it to its
//! thread's latest copy, and equal stacks are summed here. At the end
//! the addresses are symbolized once per distinct stack.

use std::collections::HashMap;

use output::profile::{FrameKind, KeyRole, ProfileFrame, ProfileSample, sample_from_entry};
use output::{MapEntryValue, Value};
use runtime::symbols::unwind::UnwindStats;
use runtime::symbols::{StackCopy, TRUNCATED_FRAME, Unwinder, UserSymbols};

use abi::stack::{USTACK_COMPLETE, UserStackCopy};

/// Where a frame was when it was unwound: found in a file, so it names the
/// same function after the process replaced its program or exited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Located {
    /// File index, offset, whether a return address (looked up one byte back).
    File(u32, u64, bool),
    /// Anonymous memory (JIT code), the vDSO: named through the process.
    Address(u64),
    /// The copy ended before the stack did.
    Truncated,
}

/// A distinct sample: pid, comm, kernel frames, user frames.
type SampleKey = (u32, Vec<u8>, Vec<u64>, Vec<Located>);

/// What the sink keeps of one distinct sample: its key values (pid, comm,
/// kernel stack) and its summed weight.
struct Summed {
    key: Vec<Value>,
    weight: u64,
    /// The user frames, once symbolized (at the end, or when the process
    /// replaced its program and its addresses would name the new one's).
    user: Option<Vec<ProfileFrame>>,
}

#[derive(Default)]
pub struct DwarfStacks {
    unwinder: Unwinder,
    symbols: UserSymbols,
    /// Each thread's latest unwound stack, with its process.
    pending: HashMap<u32, (u32, Vec<Located>)>,
    summed: HashMap<SampleKey, Summed>,
    /// Files by index (a [`Located::File`] names one).
    files: Vec<(String, String)>,
    file_index: HashMap<String, u32>,
    /// Processes whose mappings the symbolizer has read since they were
    /// met or last ran `exec`.
    remembered: std::collections::HashSet<u32>,
    /// Samples whose thread had sent no stack (a lost record).
    pub unpaired: u64,
    /// Samples printed (joined or not).
    seen: u64,
    /// Off-CPU: the weights are sums (microseconds), not counts.
    pub sums: bool,
    /// CPU time spent unwinding.
    pub unwind_time: std::time::Duration,
}

impl DwarfStacks {
    pub fn new(sums: bool) -> DwarfStacks {
        DwarfStacks {
            sums,
            ..DwarfStacks::default()
        }
    }

    /// A `send_ustack()` record: unwound now.
    pub fn record(&mut self, rec: &[u8]) {
        let u32_at = |at: usize| {
            rec.get(at..at + 4)
                .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
        };
        let u64_at = |at: usize| {
            rec.get(at..at + 8)
                .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
        };
        let (tid, pid) = (u32_at(UserStackCopy::TID), u32_at(UserStackCopy::PID));
        let len = u32_at(UserStackCopy::LEN) as usize;
        let stack = rec
            .get(UserStackCopy::BYTES..UserStackCopy::BYTES.saturating_add(len))
            .unwrap_or_default();
        let started = runtime::symbols::thread_cpu_time();
        let frames = if u64_at(UserStackCopy::IP) == 0 {
            Vec::new()
        } else {
            if self.remembered.insert(pid) {
                // For JIT and vDSO frames, named through the process.
                self.symbols.refresh_process(pid);
            }
            self.unwinder.unwind(&StackCopy {
                pid,
                regs: uelf::cfi::Regs {
                    ip: u64_at(UserStackCopy::IP),
                    sp: u64_at(UserStackCopy::SP),
                    bp: u64_at(UserStackCopy::BP),
                },
                stack,
                complete: u32_at(UserStackCopy::FLAGS) & USTACK_COMPLETE != 0,
            })
        };
        let located = frames
            .iter()
            .enumerate()
            .map(|(i, &addr)| {
                if addr == TRUNCATED_FRAME {
                    return Located::Truncated;
                }
                match self.unwinder.locate(pid, addr) {
                    Some((path, shown, offset)) => {
                        let next = self.files.len() as u32;
                        let index = *self.file_index.entry(path.clone()).or_insert_with(|| {
                            self.files.push((path, shown));
                            next
                        });
                        Located::File(index, offset, i > 0)
                    }
                    None => Located::Address(addr),
                }
            })
            .collect::<Vec<_>>();
        self.unwind_time += runtime::symbols::thread_cpu_time().saturating_sub(started);
        self.pending.insert(tid, (pid, located));
    }

    /// A process ran `exec`: its stacks so far are named by its old
    /// mappings, which no longer hold after.
    fn exec(&mut self, pid: u32) {
        let mut summed = std::mem::take(&mut self.summed);
        for ((p, _, _, user), s) in summed.iter_mut() {
            if *p == pid && s.user.is_none() {
                s.user = Some(self.user_frames(pid, user));
            }
        }
        self.summed = summed;
        self.unwinder.forget(pid);
        // Read again at its next stack, once the new program has mapped its libraries.
        self.remembered.remove(&pid);
        self.pending.retain(|_, (p, _)| *p != pid);
    }

    /// `print((tid, pid, comm, kstack, weight))`: the sample, joined to its
    /// thread's stack. False if the value is not one.
    pub fn sample(&mut self, value: &Value) -> bool {
        let Value::Tuple(items) = value else {
            return false;
        };
        if let [pid, _] = items.as_slice() {
            // `print((pid, 0))` at `exec`.
            if let Ok(pid) = u32::try_from(pid.as_bits()) {
                self.exec(pid);
            }
            return true;
        }
        let [tid, pid, comm, kstack, weight] = items.as_slice() else {
            return false;
        };
        let (Some(tid), Some(pid)) = (
            u32::try_from(tid.as_bits()).ok(),
            u32::try_from(pid.as_bits()).ok(),
        ) else {
            return false;
        };
        let weight = weight.as_bits();
        self.seen += 1;
        let user = match self.pending.get(&tid) {
            // Off-CPU: a thread blocks once per copy; on-CPU likewise one
            // sample per copy, so a copy is used once.
            Some((p, frames)) if *p == pid => frames.clone(),
            _ => {
                self.unpaired += 1;
                Vec::new()
            }
        };
        self.pending.remove(&tid);
        let kernel: Vec<u64> = match kstack {
            Value::Stack(s) => s.frames.iter().map(|f| f.addr).collect(),
            _ => Vec::new(),
        };
        let comm_bytes = match comm {
            Value::Str(b) => b.clone(),
            _ => Vec::new(),
        };
        let entry = self
            .summed
            .entry((pid, comm_bytes, kernel, user))
            .or_insert_with(|| Summed {
                key: vec![Value::UInt(u64::from(pid)), comm.clone(), kstack.clone()],
                weight: 0,
                user: None,
            });
        entry.weight = entry.weight.saturating_add(weight);
        true
    }

    /// The summed samples, their user stacks symbolized.
    pub fn samples(&mut self) -> Vec<ProfileSample> {
        let summed = std::mem::take(&mut self.summed);
        let mut out = Vec::with_capacity(summed.len());
        for ((pid, _, _, user), s) in summed {
            let value = if self.sums {
                MapEntryValue::Sum(output::Integer::Unsigned(s.weight))
            } else {
                MapEntryValue::Count(s.weight)
            };
            // `-U` prints 0 for the kernel stack.
            let roles: &[KeyRole] = if matches!(s.key.get(2), Some(Value::Stack(_))) {
                &[KeyRole::Pid, KeyRole::Comm, KeyRole::KernelStack]
            } else {
                &[KeyRole::Pid, KeyRole::Comm]
            };
            let Some(mut sample) = sample_from_entry(roles, &s.key[..roles.len()], &value) else {
                continue;
            };
            sample.user = match s.user {
                Some(frames) => frames,
                None => self.user_frames(pid, &user),
            };
            out.push(sample);
        }
        out
    }

    fn user_frames(&mut self, pid: u32, located: &[Located]) -> Vec<ProfileFrame> {
        let mut frames: Vec<ProfileFrame> = Vec::with_capacity(located.len());
        // One symbolizer call per file of the stack.
        let mut by_file: HashMap<u32, Vec<(usize, u64, bool)>> = HashMap::new();
        for (i, l) in located.iter().enumerate() {
            frames.push(match *l {
                Located::Truncated => ProfileFrame::named("[truncated]", FrameKind::User),
                Located::File(file, offset, ret) => {
                    by_file.entry(file).or_default().push((i, offset, ret));
                    ProfileFrame {
                        name: None,
                        kind: FrameKind::User,
                        addr: offset,
                        module: self.files.get(file as usize).map(|f| f.1.clone()),
                    }
                }
                Located::Address(addr) => {
                    let sym = self.symbols.frames(pid, &[addr]).pop().flatten();
                    let module = sym.as_ref().and_then(|s| s.module.clone());
                    let jit = module
                        .as_deref()
                        .is_some_and(|m| m.starts_with("/tmp/perf-") && m.ends_with(".map"));
                    ProfileFrame {
                        name: sym.map(|s| s.name),
                        kind: if jit { FrameKind::Jit } else { FrameKind::User },
                        addr,
                        module,
                    }
                }
            });
        }
        for (file, wanted) in by_file {
            let Some((path, shown)) = self.files.get(file as usize).cloned() else {
                continue;
            };
            let offsets: Vec<(u64, bool)> = wanted.iter().map(|w| (w.1, w.2)).collect();
            for ((i, _, _), sym) in wanted
                .iter()
                .zip(self.symbols.file_frames(&path, &shown, &offsets))
            {
                frames[*i].name = sym.map(|s| s.name);
            }
        }
        frames
    }

    /// Samples printed so far, each one `@events` counted.
    pub fn samples_seen(&self) -> u64 {
        self.seen
    }

    pub fn stats(&self) -> UnwindStats {
        self.unwinder.stats
    }
}
