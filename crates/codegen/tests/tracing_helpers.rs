//! Helpers only BTF-typed tracing programs may call: a `rawtracepoint`
//! probe calling one is made a `tp_btf/NAME` program (other raw tracepoints
//! stay `raw_tp/NAME`), and the helper gets the context's pointer as read,
//! so the verifier still knows its BTF type.

mod common;

use common::{compile_on, disasm_with_attach};
use ktypes::FixtureKernel;

#[test]
fn socket_cookie_makes_a_raw_tracepoint_a_tracing_program() {
    let src = "rawtracepoint:sched_switch { @[socket_cookie(args.prev)] = count(); } \
               rawtracepoint:sys_enter { @n = count(); }";
    let compiled = compile_on(src, &FixtureKernel::typical());
    insta::assert_snapshot!(disasm_with_attach(&compiled));
}

#[test]
fn skboutput_sends_a_header_and_the_packet_to_the_perf_buffer() {
    let src = "rawtracepoint:sched_switch { $r = skboutput(\"a.pcap\", args.prev, 64, 14); }";
    let compiled = compile_on(src, &FixtureKernel::typical());
    assert_eq!(
        compiled.manifest.skb_outputs,
        [abi::SkbOutputSite {
            path: "a.pcap".into(),
            offset: 14
        }]
    );
    insta::assert_snapshot!(disasm_with_attach(&compiled));
}
