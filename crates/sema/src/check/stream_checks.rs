//! Streams in the checker: each clause's body checked with the instance's
//! fields as its variables (a field's type is the union over the clauses
//! that assign it), each clause's key and link recorded, and once every body
//! is checked, each stream laid out: which table every clause finds its
//! instance in, and whether records must carry the task's identity.

use syntax::ast::{Item, StreamStage};

use super::items::{Instance, Role};
use super::{Checker, Scope, is_storable};
use crate::diagnostics as diag;
use crate::providers::Context;
use crate::streams::{self as streams, KeyLookup, StageInfo, StageRef, StreamInfo};
use crate::typed::TypedProbe;
use crate::types::Type;

impl Checker<'_> {
    /// One clause of a stream: its predicate, key and link (recorded per
    /// clause), and its body, whose variables are the instance's fields.
    pub(super) fn stage(&mut self, mut scope: Scope, stage: StageRef, clause: &StreamStage) {
        scope.probe.stage = Some(stage);
        // The instance's fields are this body's variables.
        let mut vars = self.known_fields[stage.stream].clone();
        vars.extend(self.stream_fields[stage.stream].clone());
        scope.probe.vars = vars;
        if let Some(pred) = &clause.predicate {
            let t = self.expr(&mut scope, pred);
            self.expect_condition(pred, &t);
        }
        for (expr, is_link) in [(&clause.key, false), (&clause.link, true)] {
            let Some(e) = expr else { continue };
            let t = self.expr(&mut scope, e);
            if !is_storable(&t) {
                self.error(diag::type_mismatch(
                    e.span,
                    "a stream key",
                    "an integer, string or tuple",
                    &t,
                ));
                continue;
            }
            let map = if is_link {
                &mut self.stage_links
            } else {
                &mut self.stage_keys
            };
            map.entry((stage.stream, stage.stage))
                .or_insert((t.stored(), e.span));
        }
        if let Some(body) = &clause.body {
            self.block(&mut scope, body);
        }
        let fields = &mut self.stream_fields[stage.stream];
        for (name, t) in &scope.probe.vars {
            let merged = match fields.get(name) {
                Some(old) => old.unify(t).unwrap_or_else(|| old.clone()),
                None => t.clone(),
            };
            fields.insert(name.clone(), merged);
        }
        self.probes.push(scope.probe);
    }

    /// A stream as far as this round knows it (stage names and fields), for `args->` in handlers.
    pub(super) fn stream_view(&self, k: usize) -> Option<StreamInfo> {
        let Item::Stream(st) = &self.program.items[*self.stream_items.get(k)?] else {
            return None;
        };
        let mut fields = self.known_fields[k].clone();
        fields.extend(self.stream_fields[k].clone());
        Some(StreamInfo {
            name: st.name.clone(),
            item: self.stream_items[k],
            stages: (0..st.stages.len())
                .map(|i| StageInfo {
                    name: streams::default_stage_name(st, i),
                    role: st.stages[i].role,
                    key: Type::U64,
                    lookup: KeyLookup::Primary,
                    link: None,
                })
                .collect(),
            links: Vec::new(),
            fields,
            timeout_ns: st
                .timeout
                .as_ref()
                .and_then(streams::literal)
                .unwrap_or(streams::DEFAULT_TIMEOUT_NS),
            max_instances: st
                .max
                .as_ref()
                .and_then(streams::literal)
                .map_or(streams::DEFAULT_MAX_INSTANCES, |m| {
                    m.min(u32::MAX as u64) as u32
                }),
            incomplete: st.incomplete,
            has_handlers: false,
            emits_records: true,
            captures_identity: true,
        })
    }

    /// After the reporting round: every stream with its keys, links and fields.
    pub(super) fn finish_streams(&mut self, instances: &[Instance]) -> Vec<StreamInfo> {
        let mut out = Vec::new();
        for k in 0..self.stream_items.len() {
            let Some(mut info) = self.stream_view(k) else {
                continue;
            };
            let Item::Stream(st) = &self.program.items[self.stream_items[k]] else {
                continue;
            };
            info.fields = self.stream_fields[k].clone();
            info.has_handlers = instances
                .iter()
                .any(|i| matches!(i.role, Role::Handler { stream } if stream == k));
            info.emits_records = !info.has_handlers
                || self
                    .handlers
                    .iter()
                    .filter(|h| matches!(h.resolved.context, Context::Stream(s) if s == k))
                    .any(calls_emit);
            info.captures_identity = !info.has_handlers
                || info.incomplete
                || self
                    .handlers
                    .iter()
                    .filter(|h| matches!(h.resolved.context, Context::Stream(s) if s == k))
                    .any(shows_identity);
            let key_of = |i: usize| {
                self.stage_keys
                    .get(&(k, i))
                    .cloned()
                    .unwrap_or((Type::U64, st.stages[i].span))
            };
            let begin_key = key_of(0).0;
            let mut diags = Vec::new();
            for i in 0..st.stages.len() {
                let (key, span) = key_of(i);
                info.stages[i].key = key.clone();
                if i > 0 {
                    info.stages[i].lookup = if same_key(&key, &begin_key) {
                        KeyLookup::Primary
                    } else {
                        match info.links.iter().position(|l| same_key(l, &key)) {
                            Some(l) if (0..i).any(|j| info.stages[j].link == Some(l)) => {
                                KeyLookup::Link(l)
                            }
                            _ => {
                                diags.push(diag::stream_key_unreachable(
                                    span,
                                    &info.stages[i].name,
                                    &key,
                                    &begin_key,
                                ));
                                KeyLookup::Primary
                            }
                        }
                    };
                }
                if let Some((link, lspan)) = self.stage_links.get(&(k, i)).cloned() {
                    if same_key(&link, &begin_key) {
                        diags.push(diag::stream_link_same_type(lspan, &begin_key));
                    } else {
                        let l = match info.links.iter().position(|t| same_key(t, &link)) {
                            Some(l) => l,
                            None => {
                                info.links.push(link);
                                info.links.len() - 1
                            }
                        };
                        info.stages[i].link = Some(l);
                    }
                }
            }
            for d in diags {
                self.error(d);
            }
            out.push(info);
        }
        out
    }
}

/// Two stream keys file into the same table when they have the same shape
/// (integers of any width are stored as 64-bit; strings of any size alike).
fn same_key(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Tuple(x), Type::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_key(p, q))
        }
        (Type::Tuple(_), _) | (_, Type::Tuple(_)) => false,
        _ => a.unify(b).is_some(),
    }
}

/// A handler that sends its record with `emit()`.
fn calls_emit(handler: &TypedProbe) -> bool {
    handler
        .calls
        .values()
        .any(|c| c.name == crate::builtins::emit::NAME)
}

/// A handler that emits its record, or reads `args->comm` or `args->cgroup`.
fn shows_identity(handler: &TypedProbe) -> bool {
    calls_emit(handler)
        || handler
            .stream_args
            .values()
            .any(|a| matches!(a, streams::StreamArg::Comm | streams::StreamArg::Cgroup))
}
