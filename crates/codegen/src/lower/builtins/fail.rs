//! `fail(fmt, args...)` (rule in `sema::builtins::fail`): a call that
//! reaches the lowering sits in a branch never taken (the checker stops
//! the script where one is reached), so it emits nothing.

use super::{CallSite, Lowering};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "fail",
    effect: Some(effect),
    ..Lowering::NONE
};

fn effect(_: &mut Lower<'_>, _: &CallSite<'_>) {}
