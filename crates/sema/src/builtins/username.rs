//! `username` (also `username()`): the name of the current task's user.
//!
//! What it is: the program keeps the user id (`bpf_get_current_uid_gid`);
//! user space prints it as the first name `/etc/passwd` gives that uid, as
//! bpftrace's current release does: an empty string for a uid the file
//! does not name. A `username_t`: it keys maps and prints with `%s`, but is
//! not a string the program can compare.
//!
//! Example: `tracepoint:syscalls:sys_enter_openat { @[username] = count(); }`
//!
//! Lowering: `codegen::lower::builtins::username`.

use super::VariableDef;
use crate::config::ScriptConfig;
use crate::providers::Context;
use crate::types::Type;

pub const DEF: VariableDef = VariableDef {
    name: "username",
    numbered: false,
    help: "the name of the task's user (its uid looked up in /etc/passwd when printed)",
    ty,
};

fn ty(_: &Context, _: u8, _: &ScriptConfig) -> Result<Type, &'static str> {
    Ok(Type::Named(abi::NameTable::User))
}
