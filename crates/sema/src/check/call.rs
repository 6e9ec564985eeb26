//! What a builtin function's type rule may ask of the checker: the one door
//! between `crate::builtins` (a module per builtin) and the checker's state.
//!
//! [`Checker::call`](super::Checker) looks the name up in
//! [`crate::builtins::FUNCTIONS`] and runs the builtin's rule with a
//! [`CallCheck`]; whatever the rule records with [`CallCheck::set_value`] is
//! handed to the lowering of the same name in `codegen::lower::builtins`.

use source::{Diagnostic, Span};
use syntax::ast::Expr;

use super::members::MemberAccess;
use super::{Checker, Scope};
use crate::builtins::kaddr::Kallsyms;
use crate::builtins::uaddr::Binaries;
use crate::diagnostics as diag;
use crate::providers::{Context, ResolvedProbe};
use crate::typed::{CallValue, FieldAccess, PrintfSite};
use crate::types::Type;

/// One call of a builtin function being checked.
pub struct CallCheck<'c, 'a> {
    checker: &'c mut Checker<'a>,
    scope: &'c mut Scope,
    /// The whole call expression (`bswap(x)`).
    pub call: &'c Expr,
    /// The function's name as its table has it.
    pub name: &'static str,
    /// The arguments as written.
    pub args: &'c [Expr],
    /// Whether the call is the whole value of a map assignment (`@m = f()`):
    /// where aggregations may stand.
    pub assigned_to_map: bool,
    value: CallValue,
}

impl<'c, 'a> CallCheck<'c, 'a> {
    pub(super) fn new(
        checker: &'c mut Checker<'a>,
        scope: &'c mut Scope,
        call: &'c Expr,
        name: &'static str,
        args: &'c [Expr],
        assigned_to_map: bool,
    ) -> CallCheck<'c, 'a> {
        CallCheck {
            checker,
            scope,
            call,
            name,
            args,
            assigned_to_map,
            value: CallValue::None,
        }
    }

    /// What the rule recorded for the lowering.
    pub(super) fn value(&self) -> CallValue {
        self.value
    }

    /// Checks an expression (an argument) and gives its type.
    pub fn check(&mut self, e: &Expr) -> Type {
        self.checker.expr(self.scope, e)
    }

    /// Checks every argument, in order.
    pub fn check_all(&mut self) -> Vec<Type> {
        let args = self.args;
        args.iter().map(|a| self.check(a)).collect()
    }

    /// Reports a problem (only in the checker's reporting round).
    pub fn error(&mut self, d: Diagnostic) {
        self.checker.error(d);
    }

    /// Checks the arguments that are not maps, for a call of the wrong
    /// shape (a map named there is not read as a value: its key would not fit).
    pub fn check_non_map_args(&mut self) {
        let args = self.args;
        for a in args {
            if !matches!(a.kind, syntax::ast::ExprKind::Map { .. }) {
                self.check(a);
            }
        }
    }

    /// Reports `d` unless a diagnostic with its code was reported already
    /// (a warning about the script as a whole, such as an unstable feature).
    pub fn report_once(&mut self, d: Diagnostic) {
        if !self.checker.diags.iter().any(|seen| seen.code == d.code) {
            self.error(d);
        }
    }

    /// Reports and returns false unless `t` (the type of `e`) is an integer
    /// or pointer; `what` names the place (`bswap()`, `str()'s length`).
    pub fn expect_int(&mut self, e: &Expr, t: &Type, what: &str) -> bool {
        self.checker.expect_int(e, t, what)
    }

    /// Reports E0301 at the call: the function takes `what` (`"one integer"`).
    pub fn wrong_arg_count(&mut self, what: &str) {
        let d = diag::wrong_arg_count(self.call.span, self.name, what, self.args.len());
        self.error(d);
    }

    /// Reports E0311: `what` must be written as a literal.
    pub fn needs_literal(&mut self, span: Span, what: &str) {
        self.error(diag::needs_literal(span, what));
    }

    /// Reports E0206 for a form weft does not compile yet.
    pub fn not_supported_yet(&mut self, span: Span, what: &str) {
        self.error(diag::not_supported_yet(span, what));
    }

    /// Reports E0476 unless `--unsafe` was given: the builtin changes the
    /// system (`what` it does, in a few words: "runs a command").
    pub fn require_unsafe(&mut self, what: &str) {
        if !self.checker.opts.unsafe_mode {
            let d = diag::needs_unsafe(self.call.span, self.name, what);
            self.error(d);
        }
    }

    /// Assigns variable `var` (a `$name`) a value of type `t`, as `$name =`
    /// would (`find()`'s result).
    pub fn assign_var(&mut self, var: &Expr, t: Type) {
        let syntax::ast::ExprKind::Var(name) = &var.kind else {
            return;
        };
        let stored = super::stmts::var_storage(&t);
        let key = self
            .checker
            .var_for_assignment(self.scope, var.id, name, var.span);
        self.checker
            .define_var(self.scope, &key, name, stored, var.span);
        let t = self.checker.var_type(self.scope, &key);
        self.scope.probe.types.insert(var.id, t);
    }

    /// Whether the call is in a branch the checker knows is never taken
    /// (`if (0) { ... }`, `if ($1 > 2)` with `$1` put in as 1).
    pub fn in_branch_never_taken(&self) -> bool {
        self.scope.never_taken > 0
    }

    /// Records what the lowering needs: a constant or a table index.
    pub fn set_value(&mut self, value: CallValue) {
        self.value = value;
    }

    /// The probe the body is checked for.
    pub fn probe(&self) -> &ResolvedProbe {
        &self.scope.probe.resolved
    }

    /// What the probe's context pointer points to.
    pub fn context(&self) -> &Context {
        &self.scope.probe.resolved.context
    }

    /// `args->NAME` as resolved, when `e` is one.
    pub fn field(&self, e: &Expr) -> Option<&FieldAccess> {
        self.scope.probe.fields.get(&e.id)
    }

    /// A struct member read through BTF, when `e` is one.
    pub fn member(&self, e: &Expr) -> Option<&MemberAccess> {
        self.scope.probe.members.get(&e.id)
    }

    /// A map named as a whole (`clear(@m)`, `keys` `None`) or as an element
    /// (`delete(@m[k])`): checks its keys and records which map it is.
    pub fn map_ref(&mut self, m: &Expr, keys: Option<&Vec<Expr>>) {
        self.checker.map_ref(self.scope, m, keys);
    }

    /// What is known of the map `m` names (`@m`), from its stores so far
    /// (or the previous round's), if anything.
    pub fn map_info(&self, m: &Expr) -> Option<crate::typed::MapInfo> {
        let syntax::ast::ExprKind::Map { name, .. } = &m.kind else {
            return None;
        };
        self.checker.map_info(&format!("@{name}")).cloned()
    }

    /// Notes that a probe deletes from the map `m` names (so it is a hash).
    pub fn mark_deleted(&mut self, m: &Expr) {
        self.checker.mark_deleted(self.scope, m);
    }

    /// Adds a printf site to the program; its index.
    pub fn add_printf(&mut self, site: PrintfSite) -> usize {
        self.checker.printfs.push(site);
        self.checker.printfs.len() - 1
    }

    /// The index of a strftime format in the program (the same format, the
    /// same index, so a map or variable keeps one type across its stores and
    /// the checker's rounds).
    pub fn add_time_format(&mut self, format: String) -> usize {
        let formats = &mut self.checker.time_formats;
        match formats.iter().position(|f| *f == format) {
            Some(i) => i,
            None => {
                formats.push(format);
                formats.len() - 1
            }
        }
    }

    /// Adds a `join()` delimiter to the program; its index.
    pub fn add_join_delimiter(&mut self, delimiter: String) -> usize {
        self.checker.join_delimiters.push(delimiter);
        self.checker.join_delimiters.len() - 1
    }

    /// The index of a `cgroup_path()` hierarchy filter (the same filter,
    /// the same index, so equal paths are equal map keys).
    pub fn add_cgroup_path_filter(&mut self, filter: String) -> usize {
        let filters = &mut self.checker.cgroup_path_filters;
        match filters.iter().position(|f| *f == filter) {
            Some(i) => i,
            None => {
                filters.push(filter);
                filters.len() - 1
            }
        }
    }

    /// The index of an `skboutput()` destination (the same file and
    /// offset, the same index).
    pub fn add_skb_output(&mut self, site: abi::SkbOutputSite) -> usize {
        let sites = &mut self.checker.skb_outputs;
        match sites.iter().position(|s| *s == site) {
            Some(i) => i,
            None => {
                sites.push(site);
                sites.len() - 1
            }
        }
    }

    /// The kernel the script is checked for (`None` when checking without one).
    pub fn kernel(&self) -> Option<&'a dyn ktypes::KernelInfo> {
        self.checker.kernel
    }

    /// The binaries `uaddr()` reads (`None` when checking without them).
    pub fn binaries(&self) -> Option<&'a Binaries<'a>> {
        self.checker.binaries
    }

    /// The run's settings (the script's `config` and the environment).
    pub fn config(&self) -> &'a crate::config::ScriptConfig {
        self.checker.config
    }

    /// The kernel and the `/proc/kallsyms` text `kaddr()` reads (`None`
    /// when checking without a kernel).
    pub fn kallsyms(&self) -> Option<(&'a dyn ktypes::KernelInfo, &'a Kallsyms)> {
        Some((self.checker.kernel?, self.checker.kallsyms?))
    }
}
