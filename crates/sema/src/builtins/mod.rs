//! Builtins as units: each builtin function has a module here holding its
//! signature, help and type rule (a [`FunctionDef`]); its lowering, under the
//! same name, is a module of `codegen::lower::builtins`. [`FUNCTIONS`] is the
//! table the checker looks calls up in, and the list "did you mean" picks from.
//!
//! Adding a builtin function: a file here defining `pub const DEF:
//! FunctionDef` and its line in `functions!` below; a file in codegen with
//! its `Lowering` and its line in that table. A rule checks the arguments
//! through [`CallCheck`], records what the lowering needs
//! ([`CallCheck::set_value`]) and gives the call's type.

mod functions;
pub mod kprobe;
pub mod uprobe;
mod variables;

pub use crate::check::CallCheck;
pub use functions::planned_function;
pub use variables::{BUILTIN_NAMES, Builtin, builtin, planned_builtin};

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

/// Declares each builtin's module and the table of their definitions:
/// `module => DEF, ...;` (a module may define a family, as `ksym`/`usym`).
macro_rules! functions {
    ($($module:ident => $($def:ident),+;)*) => {
        $(pub mod $module;)*
        /// Every builtin function weft compiles, in the order help lists them.
        pub static FUNCTIONS: &[&FunctionDef] = &[$($(&$module::$def),+),*];
    };
}

functions! {
    aggregations => COUNT, SUM, AVG, MIN, MAX, STATS, HIST, LHIST;
    printf => PRINTF, CAT;
    time => DEF;
    join => DEF;
    emit => DEF;
    exit => DEF;
    print => DEF;
    clear => CLEAR, ZERO;
    delete => DEF;
    str => DEF;
    buf => DEF;
    ntop => DEF;
    strftime => DEF;
    stacks => KSTACK, USTACK, KSYM, USYM;
    bswap => DEF;
    reg => DEF;
    uaddr => DEF;
}

/// The builtin function called `name`.
pub fn function_def(name: &str) -> Option<&'static FunctionDef> {
    FUNCTIONS.iter().copied().find(|f| f.name == name)
}

/// Every builtin function's name, for "did you mean".
pub fn function_names() -> Vec<&'static str> {
    FUNCTIONS.iter().map(|f| f.name).collect()
}
