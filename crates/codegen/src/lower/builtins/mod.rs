//! Lowering of built-in variables and functions, one file per group,
//! mirroring `sema::builtins`.

mod bswap;
mod functions;
mod kprobe;
mod stacks;
mod uprobe;
mod variables;
