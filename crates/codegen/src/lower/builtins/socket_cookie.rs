//! `socket_cookie(sk)` (rule in `sema::builtins::socket_cookie`):
//! `bpf_get_socket_cookie(sk)`, with `sk` passed as the verifier typed it
//! (a BTF pointer read from the tracing program's context).

use super::{CallSite, Lowering};
use crate::asm::{Helper, Src, VReg};
use crate::lower::Lower;

pub(crate) const LOWERING: Lowering = Lowering {
    name: "socket_cookie",
    scalar: Some(scalar),
    ..Lowering::NONE
};

fn scalar(l: &mut Lower<'_>, call: &CallSite<'_>) -> VReg {
    let sk = l.scalar(&call.args[0]);
    let cookie = l.asm.vreg();
    l.asm.call(Helper::GET_SOCKET_COOKIE, &[Src::Reg(sk)], Some(cookie));
    cookie
}
