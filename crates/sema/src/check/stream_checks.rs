//! Streams in the checker: each clause's body checked with the instance's
//! fields as its variables (a field's type is the union over the clauses
//! that assign it; a `let` or `for` variable is the block's own, not a
//! field), each clause's key and links recorded, and once every body
//! is checked, each stream laid out: which key slot every clause finds its
//! instance in and files it under, and whether records must carry the
//! task's identity.

use source::Diagnostic;
use syntax::ast::{Item, StageRole, Stream, StreamStage};

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
        scope.scopes.add_root_names(vars.keys());
        scope.probe.vars = vars;
        if let Some(pred) = &clause.predicate {
            let t = self.expr(&mut scope, pred);
            self.expect_condition(pred, &t);
        }
        let keys = clause.key.iter().map(|k| (k, false));
        for (key, is_link) in keys.chain(clause.links.iter().map(|k| (k, true))) {
            let e = &key.expr;
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
            let at = (stage.stream, stage.stage);
            if is_link {
                let links = self.stage_links.entry(at).or_default();
                if links.len() < clause.links.len() {
                    links.push((t.stored(), e.span));
                }
            } else {
                self.stage_keys.entry(at).or_insert((t.stored(), e.span));
            }
        }
        if let Some(body) = &clause.body {
            self.block(&mut scope, body);
        }
        self.finish_vars(&mut scope);
        let fields = &mut self.stream_fields[stage.stream];
        // `let` and `for` variables are the block's own: the program keeps
        // them on its stack, and they never reach the record.
        let locals = &scope.scopes.locals;
        for (name, t) in scope
            .probe
            .vars
            .iter()
            .filter(|(k, _)| !locals.contains(*k))
        {
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
                    links: Vec::new(),
                    keep_last: st.stages[i].keep_last,
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
            sample: streams::sample_rate(st),
            queue: streams::queue_depth(st),
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
            let diags = self.resolve_keys(k, st, &mut info);
            for d in diags {
                self.error(d);
            }
            out.push(info);
        }
        out
    }

    /// Gives each clause of stream `k` the key slot it looks its instance up
    /// in, and each `link` the slot it files the instance under; the
    /// diagnostics of keys that can never match.
    ///
    /// Slot 0 is the begin key's; `link KEY [as NAME]` files one named NAME,
    /// or the key's own text. A clause's `by KEY as NAME` looks in slot
    /// NAME; a `by KEY` in the slot its text names, never in one that
    /// merely has its type (a thread id and an inode are both integers).
    /// Slots are reachable from `begin`, through the links of
    /// clauses that are themselves reachable; a clause whose slot is not
    /// can never match.
    fn resolve_keys(&self, k: usize, st: &Stream, info: &mut StreamInfo) -> Vec<Diagnostic> {
        let mut diags = Vec::new();
        let key_of = |i: usize| {
            self.stage_keys
                .get(&(k, i))
                .cloned()
                .unwrap_or((Type::U64, st.stages[i].span))
        };
        let slot_name = |i: usize| {
            st.stages[i]
                .key
                .as_ref()
                .map_or("tid".to_string(), |key| key.slot_name().to_string())
        };
        // (name, type) of every slot; 0 is the begin key's.
        let mut slots: Vec<(String, Type)> = vec![(slot_name(0), key_of(0).0)];
        let mut stage_links: Vec<Vec<usize>> = vec![Vec::new(); st.stages.len()];
        for (i, clause) in st.stages.iter().enumerate() {
            let types = self.stage_links.get(&(k, i)).cloned().unwrap_or_default();
            for (link, (ty, span)) in clause.links.iter().zip(types) {
                let name = link.slot_name();
                if clause.role == StageRole::End {
                    diags.push(diag::stream_link_unused(
                        span,
                        "the instance ends in this clause, so nothing can find it by this key",
                    ));
                    continue;
                }
                if name == slots[0].0 {
                    diags.push(diag::stream_link_unused(
                        span,
                        &format!("`{name}` is the begin key, which already files the instance"),
                    ));
                    continue;
                }
                match slots.iter().position(|(n, _)| n == name) {
                    Some(at) => match slots[at]
                        .1
                        .unify(&ty)
                        .filter(|_| same_key(&slots[at].1, &ty))
                    {
                        Some(u) => {
                            slots[at].1 = u;
                            stage_links[i].push(at);
                        }
                        None => diags.push(diag::stream_key_type_mismatch(
                            span,
                            name,
                            &slots[at].1,
                            &ty,
                        )),
                    },
                    None => {
                        slots.push((name.to_string(), ty));
                        stage_links[i].push(slots.len() - 1);
                    }
                }
            }
        }
        // The slot each clause after `begin` looks its instance up in.
        let mut lookups: Vec<Option<usize>> = vec![Some(0); st.stages.len()];
        for (i, clause) in st.stages.iter().enumerate().skip(1) {
            let (ty, span) = key_of(i);
            let stage = &info.stages[i].name;
            let named = clause.key.as_ref().and_then(|key| key.name.clone());
            let wanted = slot_name(i);
            let found = slots.iter().position(|(n, _)| *n == wanted);
            if found.is_none() {
                let at = named.as_ref().map_or(span, |(_, name_span)| *name_span);
                let listed = list_slots(&slots);
                let same_type: Vec<&str> = slots
                    .iter()
                    .filter(|(_, slot_ty)| same_key(slot_ty, &ty))
                    .map(|(n, _)| n.as_str())
                    .collect();
                diags.push(if same_type.is_empty() {
                    diag::stream_key_unreachable(at, stage, &wanted, &listed)
                } else {
                    diag::stream_key_ambiguous(at, stage, &wanted, &ty, &same_type, &listed)
                });
            }
            lookups[i] = found;
            let Some(at) = found else { continue };
            match slots[at]
                .1
                .unify(&ty)
                .filter(|_| same_key(&slots[at].1, &ty))
            {
                Some(u) => slots[at].1 = u,
                None => {
                    let (name, slot_ty) = (&slots[at].0, &slots[at].1);
                    diags.push(diag::stream_key_type_mismatch(span, name, slot_ty, &ty));
                    lookups[i] = None;
                }
            }
        }
        // Which slots the begin key reaches, through clauses it reaches.
        let mut reached = vec![false; slots.len()];
        reached[0] = true;
        let mut grew = true;
        while grew {
            grew = false;
            for i in 0..st.stages.len() {
                let live = i == 0 || lookups[i].is_some_and(|at| reached[at]);
                for &at in stage_links[i].iter().filter(|_| live) {
                    if !reached[at] {
                        reached[at] = true;
                        grew = true;
                    }
                }
            }
        }
        for (i, lookup) in lookups.iter().enumerate().skip(1) {
            if let Some(at) = lookup.filter(|&at| !reached[at]) {
                let filers: Vec<&str> = (1..st.stages.len())
                    .filter(|&j| stage_links[j].contains(&at))
                    .map(|j| info.stages[j].name.as_str())
                    .collect();
                diags.push(diag::stream_stage_unreachable(
                    key_of(i).1,
                    &info.stages[i].name,
                    &slots[at].0,
                    &filers,
                ));
            }
        }
        info.links = slots[1..]
            .iter()
            .map(|(name, key)| streams::LinkSlot {
                name: name.clone(),
                key: key.clone(),
            })
            .collect();
        for (i, stage) in info.stages.iter_mut().enumerate() {
            let at = if i == 0 { 0 } else { lookups[i].unwrap_or(0) };
            stage.key = slots[at].1.clone();
            stage.lookup = match at {
                0 => KeyLookup::Primary,
                l => KeyLookup::Link(l - 1),
            };
            stage.links = stage_links[i].iter().map(|&at| at - 1).collect();
        }
        diags
    }
}

/// The key slots of a stream for a diagnostic: `` `tid` (the begin key, a
/// `uint64`), `fd` (linked, a `uint64`) ``.
fn list_slots(slots: &[(String, Type)]) -> String {
    slots
        .iter()
        .enumerate()
        .map(|(at, (name, ty))| {
            let how = if at == 0 { "the begin key" } else { "linked" };
            format!("`{name}` ({how}, a `{ty}`)")
        })
        .collect::<Vec<_>>()
        .join(", ")
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
