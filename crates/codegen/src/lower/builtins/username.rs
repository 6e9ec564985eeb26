//! `username` (rule in `sema::builtins::username`): the user id, stored as
//! 8 bytes; user space prints it as the user's name.

use sema::Type;

use super::VariableLowering;
use crate::asm::{Helper, Src, Width};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: VariableLowering = VariableLowering {
    name: "username",
    write: Some(write),
    ..VariableLowering::NONE
};

fn write(l: &mut Lower<'_>, _: u8, place: Place, _dst: &Type) {
    let uid = l.helper_value(Helper::GET_CURRENT_UID_GID);
    l.asm.mov32(uid, Src::Reg(uid));
    l.store(place, Src::Reg(uid), Width::DW);
}
