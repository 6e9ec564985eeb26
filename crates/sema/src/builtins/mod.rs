//! Builtins as units: each builtin has a module here holding its signature,
//! help and type rule (a [`FunctionDef`] for a function, a [`VariableDef`]
//! for a variable); its lowering, under the same name, is a module of
//! `codegen::lower::builtins`. [`FUNCTIONS`] and [`VARIABLES`] are the
//! tables the checker looks names up in, and the lists "did you mean"
//! picks from.
//!
//! Adding a builtin: a file here defining `pub const DEF` and its line in
//! `builtins!` below; a file in codegen with its `Lowering` and its line in
//! that table (a codegen test checks that the two tables name the same
//! builtins). A function's rule checks the arguments through [`CallCheck`],
//! records what the lowering needs ([`CallCheck::set_value`]) and gives the
//! call's type; a variable's gives its type in a probe's context.

pub mod kprobe;
mod planned;
pub mod uprobe;

pub use crate::check::CallCheck;
pub use planned::{planned_function, planned_variable};

use crate::config::ScriptConfig;
use crate::providers::Context;
use crate::types::Type;

/// A builtin function: how it is written, what it gives, its type rule.
pub struct FunctionDef {
    pub name: &'static str,
    /// How it is called, as help shows it: `bswap(n)`.
    pub signature: &'static str,
    /// What it gives, in a sentence.
    pub help: &'static str,
    /// The type rule: checks the arguments (reporting what does not fit),
    /// records what the lowering needs and gives the call's type.
    pub check: fn(&mut CallCheck<'_, '_>) -> Type,
    /// An aggregation (`count()`, `hist(n)`): only the whole value of a map
    /// assignment, folded into the map's element; its rule gives `Type::Agg`.
    pub aggregates: bool,
}

/// A builtin variable: its name, what it is, its type by probe.
pub struct VariableDef {
    pub name: &'static str,
    /// Written with a number after the name: `arg0`, `arg1`, ... (`arg`).
    pub numbered: bool,
    /// What it is, in a sentence.
    pub help: &'static str,
    /// Its type in a probe with this context (`n`: the number of a
    /// numbered one), or why that probe does not have it.
    pub ty: fn(&Context, u8, &ScriptConfig) -> Result<Type, &'static str>,
}

/// Declares each builtin's module and the two tables:
/// `module: functions(DEF, ...) variables(DEF, ...);` (a module may define a
/// family, as `ksym`/`usym`, and both a function and a variable, as `kstack`).
macro_rules! builtins {
    ($($module:ident: $(functions($($f:ident),+))? $(variables($($v:ident),+))?;)*) => {
        $(pub mod $module;)*
        /// Every builtin function weft compiles, in the order help lists them.
        pub static FUNCTIONS: &[&FunctionDef] = &[$($($(&$module::$f,)+)?)*];
        /// Every builtin variable weft compiles.
        pub static VARIABLES: &[&VariableDef] = &[$($($(&$module::$v,)+)?)*];
    };
}

builtins! {
    task: functions(PID_FN, TID_FN) variables(PID, TID, UID, GID, COMM, CURTASK, CGROUP);
    clock: functions(NSECS_FN) variables(NSECS, ELAPSED, JIFFIES);
    cpu: variables(DEF, NCPUS, BUILTIN_NCPUS);
    numaid: variables(DEF);
    rand: variables(DEF);
    cpid: variables(DEF);
    probe: variables(DEF);
    probetype: variables(DEF);
    args: variables(DEF);
    ctx: variables(DEF);
    registers: variables(ARG, RETVAL, FUNC);
    aggregations: functions(COUNT, SUM, AVG, MIN, MAX, STATS, HIST, LHIST);
    tseries: functions(DEF);
    printf: functions(PRINTF, CAT, SYSTEM, ERRORF, WARNF);
    signal: functions(DEF);
    override_return: functions(DEF);
    time: functions(DEF);
    join: functions(DEF);
    emit: functions(DEF);
    exit: functions(DEF);
    assert: functions(DEF);
    print: functions(DEF);
    clear: functions(CLEAR, ZERO);
    delete: functions(DEF);
    str: functions(DEF);
    buf: functions(DEF);
    ntop: functions(DEF);
    strftime: functions(DEF);
    stacks: functions(KSTACK, USTACK, KSYM, USYM) variables(KSTACK_VAR, USTACK_VAR);
    send_ustack: functions(DEF);
    bswap: functions(DEF);
    reg: functions(DEF);
    uaddr: functions(DEF);
    kaddr: functions(DEF);
    cgroupid: functions(DEF);
    cgroup_path: functions(DEF);
    usermode: variables(DEF);
    strlen: functions(DEF);
    strcontains: functions(DEF);
    len: functions(DEF);
    has_key: functions(DEF);
    find: functions(DEF);
    is_err: functions(DEF);
    write_user: functions(DEF);
    fail: functions(DEF);
    pton: functions(DEF);
    names: functions(STRERROR, SIGNAL_NAME, SYSCALL_NAME);
    macaddr: functions(DEF);
    strncmp: functions(DEF);
    username: variables(DEF);
    debugf: functions(DEF);
    path: functions(DEF);
    socket_cookie: functions(DEF);
    percpu_kaddr: functions(DEF);
    skboutput: functions(DEF);
    addrspace: functions(UPTR, KPTR);
}

/// Builtins whose helpers the kernel gives only to BTF-typed tracing
/// programs (`BPF_PROG_TYPE_TRACING`: fentry, fexit, tp_btf, iter).
pub fn needs_tracing_program(name: &str) -> bool {
    matches!(name, "socket_cookie" | "skboutput")
}

/// The builtin function called `name`.
pub fn function_def(name: &str) -> Option<&'static FunctionDef> {
    FUNCTIONS.iter().copied().find(|f| f.name == name)
}

/// The builtin variable `name` names, with its number (`arg2`: 2).
pub fn variable_def(name: &str) -> Option<(&'static VariableDef, u8)> {
    VARIABLES.iter().copied().find_map(|v| {
        if !v.numbered {
            return (v.name == name).then_some((v, 0));
        }
        let digits = name.strip_prefix(v.name)?;
        // `arg0`..`arg255`, without leading zeros.
        if digits.is_empty() || (digits.len() > 1 && digits.starts_with('0')) {
            return None;
        }
        Some((v, digits.parse().ok()?))
    })
}

/// Every builtin function's name, for "did you mean".
pub fn function_names() -> Vec<&'static str> {
    FUNCTIONS.iter().map(|f| f.name).collect()
}

/// Every builtin variable's name, for "did you mean" (`arg0`..`arg5` for `argN`).
pub fn variable_names() -> Vec<&'static str> {
    const ARGS: [&str; 6] = ["arg0", "arg1", "arg2", "arg3", "arg4", "arg5"];
    let mut names = Vec::new();
    for v in VARIABLES {
        if v.numbered && v.name == "arg" {
            names.extend(ARGS);
        } else {
            names.push(v.name);
        }
    }
    names
}
