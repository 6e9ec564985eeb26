//! `args` (rule in `sema::builtins::args`): no value of its own;
//! `args->NAME` is a field read of the context (`codegen::lower::expr`).

use super::VariableLowering;

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "args",
    ..VariableLowering::NONE
};
