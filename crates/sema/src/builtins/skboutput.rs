//! `skboutput("PATH", skb, len, offset)`: writes the first `len` bytes of
//! socket buffer `skb` (a `struct sk_buff *`) to the pcap file PATH, less its
//! first `offset` bytes (14 leaves out an Ethernet header), as bpftrace's
//! current release does: the file's link type is raw IP, each packet
//! stamped with the time it was seen. Gives 0, or the helper's negative error.
//!
//! Why it is limited: `bpf_skb_output` is given only to BTF-typed tracing
//! programs with an `sk_buff` the verifier knows (an argument of fentry/fexit,
//! `tp_btf`, or `rawtracepoint`, which then loads as a tracing program), and
//! writes only to a perf buffer (`abi::SKB_MAP`; the ring buffer carries
//! everything else): a packet the buffer has no room for is counted as lost.
//! PATH and `offset` are literals: the file is opened before probes attach.
//!
//! Example: `rawtracepoint:net_dev_start_xmit { skboutput("out.pcap", args.skb, args.skb.len, 14); }`
//!
//! Lowering: `codegen::lower::builtins::skboutput` (a record header on the
//! stack, then `bpf_skb_output`); the pcap writer is `cli::pcap`.

use syntax::ast::ExprKind;

use super::socket_cookie::TRACING_PROBES;
use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "skboutput",
    signature: "skboutput(\"PATH\", skb, len, offset)",
    help: "writes len bytes of socket buffer skb, less its first offset bytes, to the pcap file PATH",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    if !cx.probe().is_tracing_program() {
        let provider = cx.probe().provider;
        let d = diag::not_in_this_probe(cx.call.span, "skboutput", provider, TRACING_PROBES);
        cx.error(d);
    }
    let [path, skb, len, offset] = cx.args else {
        cx.check_non_map_args();
        cx.wrong_arg_count("a pcap file, a socket buffer, a length and an offset");
        return Type::U32;
    };
    let t = cx.check(skb);
    if !matches!(&t, Type::Pointer { .. }) {
        let d = diag::type_mismatch(skb.span, "skboutput()", "a `struct sk_buff *`", &t);
        cx.error(d);
    }
    let t = cx.check(len);
    cx.expect_int(len, &t, "skboutput()'s length");
    let path = match &path.kind {
        ExprKind::Str(bytes) if !bytes.is_empty() => String::from_utf8_lossy(bytes).into_owned(),
        _ => {
            cx.needs_literal(path.span, "skboutput()'s pcap file");
            return Type::U32;
        }
    };
    let offset = match offset.kind {
        ExprKind::Int { value, .. } => value,
        _ => {
            cx.needs_literal(offset.span, "skboutput()'s offset");
            return Type::U32;
        }
    };
    let site = cx.add_skb_output(abi::SkbOutputSite { path, offset });
    cx.set_value(CallValue::Site(site));
    Type::U32
}
