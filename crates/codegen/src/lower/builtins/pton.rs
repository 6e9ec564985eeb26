//! `pton("ADDR")` (rule in `sema::builtins::pton`): the address's 4 or 16
//! bytes, read from the literal when compiling, stored in place.

use sema::Type;

use super::{CallSite, Lowering};
use crate::lower::{Lower, Place};

pub(crate) const LOWERING: Lowering = Lowering {
    name: "pton",
    write: Some(write),
    ..Lowering::NONE
};

fn write(l: &mut Lower<'_>, call: &CallSite<'_>, place: Place, _dst: &Type) {
    let bytes = sema::builtins::pton::literal(call.args)
        .and_then(|text| sema::builtins::pton::address_bytes(&text))
        .unwrap_or_default();
    l.write_bytes(&bytes, place);
}
