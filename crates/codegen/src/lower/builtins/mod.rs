//! Lowering of builtins, one module per builtin under the name of its
//! definition in `sema::builtins` (which holds its type rule). [`FUNCTIONS`]
//! and [`VARIABLES`] are the tables every use of a builtin goes through: as
//! a statement (its effect), as an integer in a register, written into
//! memory (strings, stacks, addresses, buffers), or folded into a map
//! (aggregations).
//!
//! Adding a builtin function: a file here defining `pub(crate) const
//! LOWERING: Lowering` with the forms it has, and its line in `lowerings!`
//! below (a test checks that every builtin sema knows has a lowering).

mod kprobe;
mod uprobe;

use sema::{Call, CallValue, Type};
use syntax::ast::{Expr, ExprKind};

use super::{Lower, Place};
use crate::asm::VReg;

/// One call of a builtin, as its lowering sees it.
pub(crate) struct CallSite<'e> {
    /// The whole call expression (its type is the call's type).
    pub(crate) expr: &'e Expr,
    pub(crate) args: &'e [Expr],
    /// What the type rule recorded (`sema::CallValue`).
    pub(crate) value: CallValue,
}

impl CallSite<'_> {
    /// The constant the type rule recorded (0 if none).
    pub(crate) fn constant(&self) -> i64 {
        match self.value {
            CallValue::Constant(v) => v,
            _ => 0,
        }
    }

    /// The table index the type rule recorded (0 if none).
    pub(crate) fn site(&self) -> usize {
        match self.value {
            CallValue::Site(i) => i,
            _ => 0,
        }
    }
}

/// An aggregation's lowering: the call, the map expression and its keys.
pub(crate) type Aggregate = fn(&mut Lower<'_>, &CallSite<'_>, &Expr, &[Expr]);

/// How one builtin is lowered, for each use its type allows.
pub(crate) struct Lowering {
    pub(crate) name: &'static str,
    /// As a statement, for its effect (`printf`, `exit`, `delete`); without
    /// it a statement evaluates an integer result and drops it.
    pub(crate) effect: Option<fn(&mut Lower<'_>, &CallSite<'_>)>,
    /// Its integer (or pointer) value, in a register.
    pub(crate) scalar: Option<fn(&mut Lower<'_>, &CallSite<'_>) -> VReg>,
    /// Its value written at `place` as the given type (strings, stacks,
    /// addresses, buffers, timestamps).
    pub(crate) write: Option<fn(&mut Lower<'_>, &CallSite<'_>, Place, &Type)>,
    /// An aggregation: folded into the element `map[keys]` of `@m[keys] = call`.
    pub(crate) aggregate: Option<Aggregate>,
}

impl Lowering {
    /// A lowering with no forms, for struct update syntax.
    pub(crate) const NONE: Lowering = Lowering {
        name: "",
        effect: None,
        scalar: None,
        write: None,
        aggregate: None,
    };
}

/// How one builtin variable is lowered (`n`: the number of `argN`).
pub(crate) struct VariableLowering {
    pub(crate) name: &'static str,
    /// Its integer (or pointer) value, in a register.
    pub(crate) scalar: Option<fn(&mut Lower<'_>, u8) -> VReg>,
    /// Its value written at `place` as the given type (strings, stacks).
    pub(crate) write: Option<fn(&mut Lower<'_>, u8, Place, &Type)>,
}

impl VariableLowering {
    /// A lowering with no forms, for struct update syntax.
    pub(crate) const NONE: VariableLowering = VariableLowering {
        name: "",
        scalar: None,
        write: None,
    };
}

/// Declares each lowering's module and the two tables:
/// `module: functions(LOWERING, ...) variables(LOWERING, ...);`.
macro_rules! lowerings {
    ($($module:ident: $(functions($($f:ident),+))? $(variables($($v:ident),+))?;)*) => {
        $(mod $module;)*
        /// The lowering of every builtin function, found by name.
        pub(crate) static FUNCTIONS: &[&Lowering] = &[$($($(&$module::$f,)+)?)*];
        /// The lowering of every builtin variable, found by name.
        pub(crate) static VARIABLES: &[&VariableLowering] = &[$($($(&$module::$v,)+)?)*];
    };
}

lowerings! {
    task: functions(PID_FN, TID_FN) variables(PID, TID, UID, GID, COMM, CURTASK, CGROUP);
    clock: functions(NSECS_FN) variables(NSECS, ELAPSED, JIFFIES);
    cpu: variables(LOWERING, NCPUS, BUILTIN_NCPUS);
    numaid: variables(LOWERING);
    rand: variables(LOWERING);
    cpid: variables(LOWERING);
    probe: variables(LOWERING);
    probetype: variables(LOWERING);
    args: variables(LOWERING);
    ctx: variables(LOWERING);
    registers: variables(ARG, RETVAL, FUNC);
    aggregations: functions(COUNT, SUM, AVG, MIN, MAX, STATS, HIST, LHIST);
    tseries: functions(DEF);
    printf: functions(PRINTF, CAT, SYSTEM, ERRORF, WARNF);
    signal: functions(LOWERING);
    override_return: functions(LOWERING);
    time: functions(LOWERING);
    join: functions(LOWERING);
    emit: functions(LOWERING);
    send_ustack: functions(LOWERING);
    exit: functions(LOWERING);
    assert: functions(LOWERING);
    print: functions(LOWERING);
    clear: functions(CLEAR, ZERO);
    delete: functions(LOWERING);
    str: functions(LOWERING);
    buf: functions(LOWERING);
    ntop: functions(LOWERING);
    strftime: functions(LOWERING);
    stacks: functions(KSTACK, USTACK, KSYM, USYM) variables(KSTACK_VAR, USTACK_VAR);
    bswap: functions(LOWERING);
    reg: functions(LOWERING);
    uaddr: functions(LOWERING);
    kaddr: functions(LOWERING);
    cgroupid: functions(LOWERING);
    cgroup_path: functions(LOWERING);
    usermode: variables(LOWERING);
    strlen: functions(LOWERING);
    strcontains: functions(LOWERING);
    len: functions(LOWERING);
    has_key: functions(LOWERING);
    find: functions(LOWERING);
    is_err: functions(LOWERING);
    write_user: functions(LOWERING);
    fail: functions(LOWERING);
    pton: functions(LOWERING);
    names: functions(STRERROR, SIGNAL_NAME, SYSCALL_NAME);
    macaddr: functions(LOWERING);
    strncmp: functions(LOWERING);
    username: variables(LOWERING);
    debugf: functions(LOWERING);
    path: functions(LOWERING);
    socket_cookie: functions(LOWERING);
    percpu_kaddr: functions(LOWERING);
    skboutput: functions(LOWERING);
    addrspace: functions(UPTR, KPTR);
}

/// The lowering of the builtin function called `name`.
pub(crate) fn lowering(name: &str) -> Option<&'static Lowering> {
    FUNCTIONS.iter().copied().find(|l| l.name == name)
}

/// The lowering of the builtin variable called `name`.
fn variable_lowering(name: &str) -> Option<&'static VariableLowering> {
    VARIABLES.iter().copied().find(|l| l.name == name)
}

impl Lower<'_> {
    /// The lowering of the builtin call `e` and its site, if `e` is one.
    pub(crate) fn builtin_call<'e>(
        &self,
        e: &'e Expr,
    ) -> Option<(&'static Lowering, CallSite<'e>)> {
        let ExprKind::Call { args, .. } = &e.kind else {
            return None;
        };
        let Call { name, value } = self.probe.calls.get(&e.id)?;
        let site = CallSite {
            expr: e,
            args,
            value: *value,
        };
        Some((lowering(name)?, site))
    }

    /// A builtin call as a statement; false if `e` is not one of the table.
    pub(crate) fn builtin_effect(&mut self, e: &Expr) -> bool {
        let Some((l, site)) = self.builtin_call(e) else {
            return false;
        };
        match (l.effect, l.scalar) {
            (Some(effect), _) => effect(self, &site),
            (None, Some(scalar)) => {
                scalar(self, &site);
            }
            (None, None) => {}
        }
        true
    }

    /// The lowering of the builtin variable `e`, with its number, if `e` is one.
    fn builtin_variable(&self, e: &Expr) -> Option<(&'static VariableLowering, u8)> {
        // `comm` or its call form `comm()`.
        let (ExprKind::Ident(_) | ExprKind::Call { .. }) = &e.kind else {
            return None;
        };
        let var = self.probe.builtins.get(&e.id)?;
        Some((variable_lowering(var.name)?, var.index))
    }

    /// A builtin variable's integer value; `None` if `e` is not one.
    pub(crate) fn builtin_variable_scalar(&mut self, e: &Expr) -> Option<VReg> {
        let (l, n) = self.builtin_variable(e)?;
        Some(match l.scalar {
            Some(scalar) => scalar(self, n),
            // Strings and `args` are not scalars; the checker keeps them out of here.
            None => self.constant(0),
        })
    }

    /// A builtin call's integer value; `None` if `e` is not one of the table.
    pub(crate) fn builtin_scalar_call(&mut self, e: &Expr) -> Option<VReg> {
        let (l, site) = self.builtin_call(e)?;
        Some(match l.scalar {
            Some(scalar) => scalar(self, &site),
            // The checker keeps calls without an integer value out of here.
            None => self.constant(0),
        })
    }

    /// `@m[keys] = e` when `e` is an aggregation call; false otherwise.
    pub(crate) fn builtin_aggregate(&mut self, e: &Expr, map: &Expr, keys: &[Expr]) -> bool {
        let Some((l, site)) = self.builtin_call(e) else {
            return false;
        };
        let Some(aggregate) = l.aggregate else {
            return false;
        };
        aggregate(self, &site, map, keys);
        true
    }

    /// A builtin call's or variable's value written at `place`; false if
    /// `e` is neither or has no written form (then its integer is stored).
    pub(crate) fn builtin_write(&mut self, e: &Expr, place: Place, dst: &Type) -> bool {
        if let Some((l, n)) = self.builtin_variable(e) {
            let Some(write) = l.write else {
                return false;
            };
            write(self, n, place, dst);
            return true;
        }
        let Some((l, site)) = self.builtin_call(e) else {
            return false;
        };
        let Some(write) = l.write else {
            return false;
        };
        write(self, &site, place, dst);
        true
    }
}

#[cfg(test)]
mod tests {
    /// The same names, each once.
    fn same(kind: &str, sema: Vec<&str>, here: Vec<&str>) {
        for name in &sema {
            assert!(here.contains(name), "{kind} `{name}` has no lowering");
        }
        for name in &here {
            assert!(
                sema.contains(name),
                "{kind} lowering `{name}` has no definition"
            );
        }
        let mut unique = here.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(
            unique.len(),
            here.len(),
            "{kind}s: a name twice in {here:?}"
        );
    }

    /// Every builtin sema checks has a lowering here, and every lowering a
    /// definition there: the tables name the same builtins.
    #[test]
    fn every_builtin_has_a_lowering() {
        same(
            "function",
            sema::builtins::FUNCTIONS.iter().map(|f| f.name).collect(),
            super::FUNCTIONS.iter().map(|l| l.name).collect(),
        );
        same(
            "variable",
            sema::builtins::VARIABLES.iter().map(|v| v.name).collect(),
            super::VARIABLES.iter().map(|l| l.name).collect(),
        );
    }
}
