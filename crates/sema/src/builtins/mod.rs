//! Built-in variables and functions: their names, documentation and type
//! rules. Each has a lowering of the same name in `codegen::lower::builtins`.

mod functions;
pub mod kprobe;
pub mod stacks;
pub mod uaddr;
pub mod uprobe;
mod variables;

pub use functions::{FUNCTION_NAMES, Function, function, planned_function};
pub use variables::{BUILTIN_NAMES, Builtin, builtin, planned_builtin};
