//! Streams: the declared life cycle of one kind of request across probes.
//!
//! Each `begin`/`stage`/`end` clause of a `stream` becomes ordinary probe
//! programs (one per resolved attach point) that find the instance by the
//! clause's `by` key; `$variables` in their blocks are fields of the
//! instance. A `stream:NAME` probe is a handler: its body runs, in the kernel,
//! inside the end programs when an instance completes, with the instance's
//! record as `args`.

use std::collections::BTreeMap;

use source::{Diagnostic, Span};
use syntax::ast::{Expr, ExprKind, StageRole, Stream};

use crate::types::Type;

/// Default time an instance may stay open.
pub const DEFAULT_TIMEOUT_NS: u64 = 10_000_000_000;
/// Default number of instances open at once.
pub const DEFAULT_MAX_INSTANCES: u32 = 10_240;

/// Which stream clause a program is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageRef {
    pub stream: usize,
    /// Index of the clause in the stream's `stages` (begin first, end last).
    pub stage: usize,
}

/// How a clause finds its instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyLookup {
    /// By the begin key, directly in the state map.
    Primary,
    /// Through link slot N, whose table maps a linked key to the begin key.
    Link(usize),
}

/// A key slot filed by `link`: a name (`as NAME`, else the key's text) and
/// the type every key filed or looked up under it is written as. Each slot
/// has a table of its own, so keys of one type in two slots never meet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkSlot {
    pub name: String,
    pub key: Type,
}

/// One clause of a checked stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageInfo {
    pub name: String,
    pub role: StageRole,
    /// The type its `by` key is written as: that of the slot it looks up
    /// (the begin key's for `begin`); `tid` when the clause has no `by`.
    pub key: Type,
    pub lookup: KeyLookup,
    /// The link slots this clause files the instance under, one per
    /// `link KEY` in written order.
    pub links: Vec<usize>,
    /// `keep last`: the stage's time is its last hit, not its first.
    pub keep_last: bool,
}

/// A checked stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamInfo {
    pub name: String,
    /// Index of the `stream` item in `Program::items`.
    pub item: usize,
    pub stages: Vec<StageInfo>,
    /// The link slots, in the order the clauses first file them.
    pub links: Vec<LinkSlot>,
    /// Captured `$fields` with their stored types, in name order.
    pub fields: BTreeMap<String, Type>,
    pub timeout_ns: u64,
    pub max_instances: u32,
    /// `sample N`: one in N instances is begun (1 without the clause).
    pub sample: u32,
    /// `queue N`: up to N open instances per begin key, taken in begin
    /// order (0 without the clause: one per key, a new begin replaces it).
    pub queue: u32,
    pub incomplete: bool,
    /// Whether any `stream:NAME` handler exists (then records are emitted only by `emit()`).
    pub has_handlers: bool,
    /// Whether completed instances can be sent as records: no handler, or
    /// a handler that calls `emit()`.
    pub emits_records: bool,
    /// Whether the begin probe records the task's comm and cgroup: only when
    /// something can show them (a record that is emitted, or `args->comm`
    /// and `args->cgroup` in a handler). Two helper calls per instance saved.
    pub captures_identity: bool,
}

/// What `args->NAME` means in a `stream:NAME` handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamArg {
    Start,
    End,
    Duration,
    Pid,
    Tid,
    Comm,
    Cgroup,
    /// The stream's sample rate N (`sample N`; 1 without it): each record
    /// stands for N instances, so `sum(args->sample)` counts them all.
    Sample,
    /// The timestamp of stage N (0 if never reached).
    StageTs(usize),
    /// A captured `$field`.
    Field(String),
}

impl StreamArg {
    /// Resolves `args->name` against a stream, with its type.
    pub fn resolve(info: &StreamInfo, name: &str) -> Option<(StreamArg, Type)> {
        let arg = match name {
            "start" => StreamArg::Start,
            "end" => StreamArg::End,
            "duration" => StreamArg::Duration,
            "pid" => StreamArg::Pid,
            "tid" => StreamArg::Tid,
            "comm" => StreamArg::Comm,
            "cgroup" => StreamArg::Cgroup,
            "sample" => StreamArg::Sample,
            other => {
                if let Some(t) = info.fields.get(other) {
                    return Some((StreamArg::Field(other.to_string()), t.clone()));
                }
                let i = info.stages.iter().position(|s| s.name == other)?;
                return Some((StreamArg::StageTs(i), Type::U64));
            }
        };
        let ty = match arg {
            StreamArg::Pid | StreamArg::Tid => Type::U32,
            StreamArg::Comm => Type::Str {
                size: crate::types::COMM_SIZE,
            },
            _ => Type::U64,
        };
        Some((arg, ty))
    }

    /// Every name `args->` accepts, for suggestions.
    pub fn names(info: &StreamInfo) -> Vec<String> {
        let mut v: Vec<String> = [
            "start", "end", "duration", "pid", "tid", "comm", "cgroup", "sample",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(info.stages.iter().map(|s| s.name.clone()));
        v.extend(info.fields.keys().cloned());
        v
    }
}

/// A stage's default name: its first attach point's last part (`sys_enter_read`).
pub fn default_stage_name(stream: &Stream, stage: usize) -> String {
    let clause = &stream.stages[stage];
    match &clause.name {
        Some((n, _)) => n.clone(),
        None => clause
            .attach_points
            .first()
            .and_then(|ap| {
                ap.parts
                    .last()
                    .cloned()
                    .or_else(|| Some(ap.provider.clone()))
            })
            .unwrap_or_else(|| format!("stage{stage}")),
    }
}

/// A literal integer (durations are already in nanoseconds).
pub fn literal(e: &Expr) -> Option<u64> {
    match e.kind {
        ExprKind::Int { value, .. } => Some(value),
        _ => None,
    }
}

/// Checks the shape of a stream: one begin first, one end last, names unique.
pub fn check_shape(stream: &Stream) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let begins = stream
        .stages
        .iter()
        .filter(|s| s.role == StageRole::Begin)
        .count();
    let ends = stream
        .stages
        .iter()
        .filter(|s| s.role == StageRole::End)
        .count();
    if begins != 1 || stream.stages.first().map(|s| s.role) != Some(StageRole::Begin) {
        out.push(crate::diagnostics::stream_shape(
            stream.name_span,
            &stream.name,
            "exactly one `begin` clause, written first",
        ));
    }
    if ends != 1 || stream.stages.last().map(|s| s.role) != Some(StageRole::End) {
        out.push(crate::diagnostics::stream_shape(
            stream.name_span,
            &stream.name,
            "exactly one `end` clause, written last",
        ));
    }
    let mut seen: Vec<(String, Span)> = Vec::new();
    for (i, clause) in stream.stages.iter().enumerate() {
        let name = default_stage_name(stream, i);
        if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
            let span = clause.name.as_ref().map_or(clause.span, |(_, s)| *s);
            out.push(crate::diagnostics::duplicate_stage_name(
                span, &name, *first,
            ));
        } else {
            seen.push((name, clause.name.as_ref().map_or(clause.span, |(_, s)| *s)));
        }
    }
    if let Some(t) = &stream.timeout
        && literal(t).is_none_or(|v| v == 0)
    {
        out.push(crate::diagnostics::needs_literal(
            t.span,
            "a stream's timeout (like `5s`)",
        ));
    }
    if let Some(m) = &stream.max
        && literal(m).is_none_or(|v| v == 0 || v > u32::MAX as u64)
    {
        out.push(crate::diagnostics::needs_literal(
            m.span,
            "a stream's `max` (a positive count)",
        ));
    }
    if let Some(q) = &stream.queue
        && literal(q).is_none_or(|v| v == 0 || v > u32::MAX as u64)
    {
        out.push(crate::diagnostics::needs_literal(
            q.span,
            "a stream's `queue` (open instances per key: a positive count)",
        ));
    }
    if let Some(s) = &stream.sample
        && literal(s).is_none_or(|v| v == 0 || v > u32::MAX as u64)
    {
        out.push(crate::diagnostics::needs_literal(
            s.span,
            "a stream's `sample` (one in N: a positive count)",
        ));
    }
    out
}

/// A stream's queue depth per key: `queue N`, 0 without it (or when N is
/// not a valid count, which `check_shape` reports).
pub fn queue_depth(stream: &Stream) -> u32 {
    stream
        .queue
        .as_ref()
        .and_then(literal)
        .filter(|&v| v >= 1 && v <= u32::MAX as u64)
        .map_or(0, |v| v as u32)
}

/// A stream's sample rate: `sample N`, 1 without it (or when N is not a
/// valid count, which `check_shape` reports).
pub fn sample_rate(stream: &Stream) -> u32 {
    stream
        .sample
        .as_ref()
        .and_then(literal)
        .filter(|&v| v >= 1 && v <= u32::MAX as u64)
        .map_or(1, |v| v as u32)
}
