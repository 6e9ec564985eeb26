//! Scratch variables and their lexical scopes, as bpftrace's current release
//! has them: a variable belongs to the block (or `for` loop) where it is
//! first assigned or declared with `let`, and is unknown after that block
//! ends; `let` may not shadow a variable still in scope.
//!
//! Each declaration gets its own key in `TypedProbe::vars` (its name, or
//! `name#N` for a later declaration of the same name in another scope), so
//! two blocks may hold variables of the same name and different types. The
//! key of every `$x`, `let` and `for` variable that is not its plain name is
//! recorded in `TypedProbe::var_keys`.
//!
//! bpftrace 0.17 had one scope per probe, and its tools read variables
//! assigned in both branches of an `if` after it. A variable read after the
//! block that assigned it has ended is therefore "hoisted": from the next
//! round on it lives in the probe's outermost scope, one variable for the
//! whole body, as 0.17 had it. Scripts written for the current release never
//! do this (it is an error there), so their meaning does not change.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use source::Span;
use syntax::ast::NodeId;

use super::{Checker, Scope};
use crate::diagnostics as diag;
use crate::types::Type;

/// What one round learned about a body's variables, for the next round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct BodyFacts {
    /// Each variable's type.
    pub(super) vars: BTreeMap<String, Type>,
    /// Names read after the block that assigned them ended (0.17's scoping).
    pub(super) hoisted: BTreeSet<String>,
    /// Each integer variable's type over the values assigned to it that are
    /// not literals (a literal converts silently, so it decides no sign).
    pub(super) typed_by_values: BTreeMap<String, Type>,
}

/// The lexical scopes open while checking one body.
#[derive(Default)]
pub(super) struct Scopes {
    /// Innermost last: each maps a variable's name to its key.
    open: Vec<HashMap<String, String>>,
    /// Declarations made so far of each name (keys after the first get `#N`).
    declared: HashMap<String, u32>,
    /// Where each key was declared (for the shadowing error).
    decl_spans: HashMap<String, Span>,
    /// Keys declared with a type (`let $x: uint8`): assignments convert to it.
    pub(super) typed: std::collections::HashSet<String>,
    /// Names read after their block ended, found in this round.
    pub(super) hoisted: BTreeSet<String>,
    /// Keys declared with `let` or by a `for` loop: in a stream clause,
    /// local to their block, never fields of the instance.
    pub(super) locals: BTreeSet<String>,
}

impl Scopes {
    /// A body whose variables start with `names` (a stream clause's fields).
    pub(super) fn with_names<'n>(names: impl Iterator<Item = &'n String>) -> Scopes {
        let mut s = Scopes::default();
        s.add_root_names(names);
        s
    }

    /// Adds variables to the outermost scope.
    pub(super) fn add_root_names<'n>(&mut self, names: impl Iterator<Item = &'n String>) {
        if self.open.is_empty() {
            self.open.push(HashMap::new());
        }
        for n in names {
            self.declared.insert(n.clone(), 1);
            self.open[0].insert(n.clone(), n.clone());
        }
    }

    pub(super) fn push(&mut self) {
        self.open.push(HashMap::new());
    }

    pub(super) fn pop(&mut self) {
        self.open.pop();
    }

    /// The key of the variable `name` visible here.
    pub(super) fn lookup(&self, name: &str) -> Option<&String> {
        self.open.iter().rev().find_map(|scope| scope.get(name))
    }

    /// Declares `name` in the innermost scope and returns its new key.
    pub(super) fn declare(&mut self, name: &str, span: Span) -> String {
        let n = self.declared.entry(name.to_string()).or_insert(0);
        *n += 1;
        let key = if *n == 1 {
            name.to_string()
        } else {
            format!("{name}#{n}")
        };
        if self.open.is_empty() {
            self.open.push(HashMap::new());
        }
        if let Some(scope) = self.open.last_mut() {
            scope.insert(name.to_string(), key.clone());
        }
        self.decl_spans.insert(key.clone(), span);
        key
    }
}

impl Checker<'_> {
    /// Records that node `id` names the variable `key` (when it is not the plain name).
    fn note_key(s: &mut Scope, id: NodeId, name: &str, key: &str) {
        if key != name {
            s.probe.var_keys.insert(id, key.to_string());
        }
    }

    /// The key of the variable `$name` read or updated at node `id`;
    /// reports it when no scope here has it.
    pub(super) fn var_in_scope(
        &mut self,
        s: &mut Scope,
        id: NodeId,
        name: &str,
        span: Span,
    ) -> Option<String> {
        match s.scopes.lookup(name).cloned() {
            Some(key) => {
                Self::note_key(s, id, name, &key);
                Some(key)
            }
            // Assigned in a block that has ended: 0.17's meaning, from the
            // next round on (see the module's docs). Meanwhile, that variable.
            None if s.scopes.decl_spans.contains_key(name) => {
                s.scopes.hoisted.insert(name.to_string());
                Some(name.to_string())
            }
            None => {
                self.error(diag::undefined_variable(span, name));
                None
            }
        }
    }

    /// The variable `$name` assigned at node `id`: the one in scope, or a
    /// new one in the innermost scope.
    pub(super) fn var_for_assignment(
        &mut self,
        s: &mut Scope,
        id: NodeId,
        name: &str,
        span: Span,
    ) -> String {
        let key = match s.scopes.lookup(name).cloned() {
            Some(key) => key,
            None => s.scopes.declare(name, span),
        };
        Self::note_key(s, id, name, &key);
        key
    }

    /// `let $name` or a `for` variable: a new variable in the innermost
    /// scope, which may not shadow one still in scope.
    pub(super) fn declare_var(
        &mut self,
        s: &mut Scope,
        id: NodeId,
        name: &str,
        span: Span,
        what: &str,
    ) -> String {
        if let Some(existing) = s.scopes.lookup(name).cloned() {
            let first = s.scopes.decl_spans.get(&existing).copied();
            self.error(diag::variable_shadowed(span, name, what, first));
        }
        let key = s.scopes.declare(name, span);
        s.scopes.locals.insert(key.clone());
        Self::note_key(s, id, name, &key);
        key
    }

    /// The type of variable `key` as far as this body knows it; a variable
    /// declared without a type or value (`let $x;`) takes the type of its
    /// first assignment, which may come later in the text (the previous
    /// round's answer), and is an `int64` zero if it is never assigned.
    pub(super) fn var_type(&self, s: &Scope, key: &str) -> Type {
        match s.probe.vars.get(key) {
            Some(Type::Void) | None => s
                .known_vars
                .vars
                .get(key)
                .filter(|t| !matches!(t, Type::Void))
                .cloned()
                .unwrap_or(Type::Void),
            Some(t) => t.clone(),
        }
    }
}
