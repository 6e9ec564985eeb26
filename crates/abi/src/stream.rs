//! The record of one instance of a `stream`: what the kernel keeps while the
//! instance is open (in the stream's state map) is exactly what it sends to
//! user space when the instance ends (with `bpf_ringbuf_output`), so the
//! state starts with the ring-buffer record header.
//!
//! Fixed part of every stream record (all little-endian):
//!
//! | offset | field |
//! |---|---|
//! | 0 | `kind: u32` = [`crate::EventKind::Stream`], `id: u32` = stream index |
//! | 8 | `start_ns: u64` (bpf_ktime_get_ns at begin) |
//! | 16 | `end_ns: u64` (0 for an incomplete instance) |
//! | 24 | `pid_tgid: u64` at begin (tgid in the high half) |
//! | 32 | `cgroup: u64` at begin |
//! | 40 | `comm: [u8; 16]` at begin |
//! | 56 | per stage: `ts_ns: u64` (first hit), then per stage: `last_ns: u64`, then per stage: `hits: u64`, then per stage after `begin`: `pid_tgid: u64` of the task that ran its first hit, then per stage after `begin`: `comm: [u8; 16]` of that task (zero unless the record shows identity and it is not the `begin` task); the `begin` stage's task is the record's own `pid_tgid` and `comm` |
//! | ... | with linked keys: `links_filed: u64` (bit N: slot N was filed), then each link slot's last key |
//! | ... | the captured `$fields`, each at its own offset |
//!
//! With `queue N` the state map's key is the begin key (8-aligned) and a
//! `u64` sequence number: the instances of one key are numbered in begin
//! order, and each later stage takes the next number it has not taken.
//!
//! A stage marked `keep last` writes each hit's time to both `ts_ns` and
//! `last_ns`. The linked keys are kept so that whatever ends the instance
//! (its end, the timeout, an eviction, a replacement, user space's sweep)
//! removes the links to it: a reused key then cannot find it.
//!
//! Every field starts 8-aligned, and an integer field of any width takes 8
//! bytes (sign- or zero-extended): scalars are stored and loaded as 64-bit
//! words wherever a stage writes them, and a begin that builds the record
//! on the stack may only make aligned stores there.

use crate::layout::Field;

pub const STREAM_START_OFFSET: u32 = 8;
pub const STREAM_END_OFFSET: u32 = 16;
pub const STREAM_PID_TGID_OFFSET: u32 = 24;
pub const STREAM_CGROUP_OFFSET: u32 = 32;
pub const STREAM_COMM_OFFSET: u32 = 40;
pub const STREAM_COMM_SIZE: u32 = 16;
/// Offset of the first stage timestamp.
pub const STREAM_STAGES_OFFSET: u32 = 56;

/// Slots of a stream's per-CPU counters map ([`StreamSpec::counters_map`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum StreamCounter {
    /// Instances created by the begin probe.
    Begun = 0,
    /// Instances that reached the end probe (records emitted or filtered).
    Completed = 1,
    /// Instances found older than the timeout by a later probe, and dropped.
    Expired = 2,
    /// A begin found an open instance under the same key and replaced it.
    Replaced = 3,
    /// The state map refused a new instance (map full and not LRU-evictable).
    MapFull = 4,
    /// `sample N`: a begin that was not chosen (N - 1 in N, on average);
    /// with [`StreamCounter::Begun`], the instances seen.
    SampledOut = 5,
    /// A stage's first or last time that kept changing under a CPU while
    /// it settled it (other CPUs stored better times of the same instance
    /// through every try): left to them, and counted.
    TimeContended = 6,
    /// `queue N`: a begin found N instances open under its key and pushed
    /// out the oldest.
    QueueOverflow = 7,
}

impl StreamCounter {
    pub const COUNT: u32 = 8;
}

/// One stage of a stream (begin, the intermediate stages, end, in order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageSpec {
    /// The stage's name (given, or the probe's last part such as `sys_enter_read`).
    pub name: String,
    /// Offset of its `ts_ns: u64`: the first hit (the last with `keep
    /// last`); 0 in the record when the stage was never reached.
    pub ts_offset: u32,
    /// Offset of its `last_ns: u64`: the last hit.
    pub last_offset: u32,
    /// Offset of its `hits: u64` (how many times the stage fired for this instance).
    pub hits_offset: u32,
    /// Offset of the `pid_tgid: u64` of the task that ran its first hit
    /// (for `begin`, the record's own).
    pub task_offset: u32,
    /// Offset of that task's `comm: [u8; 16]` (zero when the stream does
    /// not capture identity).
    pub comm_offset: u32,
}

/// A key slot the instance is linked under (`link KEY [as NAME]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamLink {
    /// The slot's name (`as NAME`, or the key as written).
    pub name: String,
    /// Kernel name of the LRU hash from a key of this slot to the begin key
    /// and the instance's `start_ns`.
    pub map: String,
    /// Offset in the record of the last key filed in this slot.
    pub key_offset: u32,
    /// Size of a key (and of the map's keys).
    pub key_size: u32,
}

/// A captured `$field` of a stream instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamField {
    /// Name without `$`.
    pub name: String,
    pub field: Field,
}

/// Everything user space needs about one `stream`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamSpec {
    pub name: String,
    /// Kernel name of the LRU hash holding open instances, keyed by the begin key.
    pub state_map: String,
    /// The link slots, slot N being bit N of the record's `links_filed`.
    pub links: Vec<StreamLink>,
    /// Offset of `links_filed: u64` (0 when the stream links nothing).
    pub links_filed_offset: u32,
    /// Kernel name of the per-CPU `u64` array indexed by [`StreamCounter`].
    pub counters_map: String,
    /// Size of a record (and of a state map value).
    pub record_size: u32,
    pub stages: Vec<StageSpec>,
    pub fields: Vec<StreamField>,
    /// Instances older than this are expired (by the next probe that finds them,
    /// or by user space's periodic sweep).
    pub timeout_ns: u64,
    /// Capacity of the state map: past it the oldest instances are evicted.
    pub max_instances: u32,
    /// Emit records for expired and evicted instances too (`incomplete` clause).
    pub emit_incomplete: bool,
    /// `sample N`: one in N instances is begun (1: every one).
    pub sample: u32,
    /// `queue N`: up to N open instances per begin key (0: one, replaced
    /// by the next begin). The state map is then keyed by the begin key
    /// and a `u64` sequence number, and [`StreamSpec::queue_map`] holds
    /// each key's counters.
    pub queue: u32,
    /// With `queue N`: the hash from a begin key to its `u64` counters: the
    /// next sequence number to begin, then per stage after `begin` the next
    /// one that stage takes.
    pub queue_map: String,
    /// The begin probe fills `cgroup` and `comm`; when nothing can show
    /// them they stay zero.
    pub captures_identity: bool,
    /// Completed instances are sent as records: the stream has no
    /// `stream:NAME` handler, or one that calls `emit()`.
    pub emits_records: bool,
}
