//! Maps in the checker: a map's key and value types are the union of every
//! store into it across all probes (a store that does not unify is an
//! error pointing at the first assignment); reads, `delete`, `clear` and
//! `print` name a map by the index its first store gave it.

use source::Span;
use syntax::ast::{Expr, ExprKind};

use super::{Checker, Scope, is_storable};
use crate::diagnostics as diag;
use crate::typed::MapInfo;
use crate::types::Type;

impl Checker<'_> {
    /// Records a store into a map and unifies its key and value types.
    pub(super) fn store_map(
        &mut self,
        s: &mut Scope,
        target: &Expr,
        name: &str,
        key: Option<Type>,
        value: Type,
        span: Span,
    ) {
        let full = format!("@{name}");
        let index = match self.map_index.get(&full) {
            None => {
                self.map_index.insert(full.clone(), self.maps.len());
                self.maps.push(MapInfo {
                    name: full.clone(),
                    key: key.clone(),
                    value: value.clone(),
                    first_assigned: span,
                    decl: None,
                    deleted: false,
                    key_labels: crate::metrics::key_labels(target),
                });
                self.maps.len() - 1
            }
            Some(&i) => {
                let labels = crate::metrics::key_labels(target);
                crate::metrics::agree_labels(&mut self.maps[i].key_labels, &labels);
                i
            }
        };
        self.unify_key(index, key, target.span);
        let existing = self.maps[index].value.clone();
        match existing.unify(&value) {
            Some(u) => self.maps[index].value = u,
            None => {
                let first = self.maps[index].first_assigned;
                self.error(diag::map_value_mismatch(
                    span, &full, &existing, &value, first,
                ));
            }
        }
        s.probe.maps.insert(target.id, index);
        s.probe
            .types
            .insert(target.id, self.maps[index].value.clone());
    }

    /// The value type `@m op= n` and `@m++` store: the map's pointer type
    /// when it holds one (`@p = (int32 *)a; @p++` stays a pointer, moved
    /// by 4 bytes), else an integer.
    pub(super) fn updated_map_value(&self, name: &str) -> Type {
        let full = format!("@{name}");
        let current = match self.map_index.get(&full) {
            Some(&i) => Some(&self.maps[i].value),
            None => self.known_index.get(&full).map(|&i| &self.known[i].value),
        };
        match current {
            Some(t @ Type::Pointer { .. }) => t.clone(),
            _ => Type::I64,
        }
    }

    pub(super) fn unify_key(&mut self, index: usize, key: Option<Type>, span: Span) {
        let m = &self.maps[index];
        let show = |k: &Option<Type>| k.as_ref().map(Type::to_string);
        let unified = match (&m.key, &key) {
            (None, None) => return,
            (Some(a), Some(b)) => a.unify(b).map(Some),
            _ => None,
        };
        match unified {
            Some(k) => self.maps[index].key = k,
            None => {
                let (name, first, old) = (m.name.clone(), m.first_assigned, show(&m.key));
                self.error(diag::map_key_mismatch(
                    span,
                    &name,
                    old.as_deref(),
                    show(&key).as_deref(),
                    first,
                ));
            }
        }
    }

    /// The key type of `@m[keys]`.
    pub(super) fn map_key(&mut self, s: &mut Scope, keys: &[Expr]) -> Option<Type> {
        let mut types = Vec::new();
        for k in keys {
            let t = self.expr(s, k);
            if !is_storable(&t) {
                self.error(diag::type_mismatch(
                    k.span,
                    "a map key",
                    "an integer, string or tuple",
                    &t,
                ));
            }
            types.push(t.stored());
        }
        match types.len() {
            0 => None,
            1 => types.pop(),
            _ => Some(Type::Tuple(types)),
        }
    }

    pub(super) fn map_read(&mut self, s: &mut Scope, e: &Expr, name: &str, keys: &[Expr]) -> Type {
        let full = format!("@{name}");
        let key = self.map_key(s, keys);
        let index = self.map_index.get(&full).copied();
        let info = match index {
            Some(i) => Some(self.maps[i].clone()),
            None => self.known_index.get(&full).map(|&i| self.known[i].clone()),
        };
        let Some(info) = info else {
            self.error(diag::map_never_assigned(e.span, &full));
            return Type::I64;
        };
        if let Some(i) = index {
            self.unify_key(i, key, e.span);
            s.probe.maps.insert(e.id, i);
        }
        if let Type::Agg(a) = &info.value {
            return match a.read_signedness() {
                // Merged over every CPU in the kernel, as user space merges it.
                Some(signed) => {
                    self.range_iter(s, e.span, diag::IterUse::AggregationRead);
                    Type::Int { size: 8, signed }
                }
                None => {
                    self.error(diag::aggregation_read(e.span, &full, a.name()));
                    Type::I64
                }
            };
        }
        info.value
    }

    /// The map named `full` (with `@`), as stored so far or, before its
    /// first store in this round, as the previous round left it.
    pub(super) fn map_info(&self, full: &str) -> Option<&MapInfo> {
        match self.map_index.get(full) {
            Some(&i) => Some(&self.maps[i]),
            None => self.known_index.get(full).map(|&i| &self.known[i]),
        }
    }

    /// Notes that a probe deletes from the map `m` names (it cannot be an array).
    pub(super) fn mark_deleted(&mut self, s: &Scope, m: &Expr) {
        if let Some(&i) = s.probe.maps.get(&m.id) {
            self.maps[i].deleted = true;
        }
    }

    /// A map named as a whole (`clear(@m)`) or as an element (`delete(@m[k])`).
    pub(super) fn map_ref(&mut self, s: &mut Scope, m: &Expr, keys: Option<&Vec<Expr>>) {
        let ExprKind::Map { name, .. } = &m.kind else {
            return;
        };
        let full = format!("@{name}");
        let key = keys.map(|k| self.map_key(s, k));
        match self.map_index.get(&full).copied() {
            Some(i) => {
                if let Some(k) = key {
                    self.unify_key(i, k, m.span);
                }
                s.probe.maps.insert(m.id, i);
                s.probe.types.insert(m.id, self.maps[i].value.clone());
            }
            None if self.known_index.contains_key(&full) => {}
            None => self.error(diag::map_never_assigned(m.span, &full)),
        }
    }
}
