//! Kernel tests of the socket and packet builtins (issue 14) on the
//! workload's TCP connection over 127.0.0.1 (`weft-workload tcp N`):
//!
//! - `socket_cookie(args.sk)` in `rawtracepoint:tcp_probe` (which then
//!   loads as a BTF-typed tracing program) is the cookie user space reads
//!   with `getsockopt(SO_COOKIE)`, and the server's socket is seen once
//!   per segment the client sent.
//! - `skboutput()` in `rawtracepoint:net_dev_start_xmit` writes a pcap file
//!   (libpcap's header, raw IP) holding each packet the workload sent, less
//!   the loopback device's 14-byte Ethernet header: exactly one one-byte
//!   segment per `write()`, each a well-formed IPv4/TCP packet.

mod common;

use common::{scratch, trace_workload};

/// The cookies `weft-workload tcp` printed: (client, server).
fn cookies(stdout: &str) -> (u64, u64) {
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("tcp cookies "))
        .unwrap_or_else(|| panic!("no cookies in:\n{stdout}"));
    let value = |key: &str| -> u64 {
        line.split(' ')
            .find_map(|kv| kv.strip_prefix(key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in `{line}`"))
    };
    (value("client="), value("server="))
}

#[test]
fn socket_cookie_is_the_cookie_getsockopt_reads() {
    require_root!();
    // No pid filter: loopback delivers segments in softirq context, which
    // may run in another task; the cookie picks the workload's socket.
    let script = "rawtracepoint:tcp_probe { @[socket_cookie(args.sk)] = count(); }";
    let out = trace_workload(script, "tcp 7", &[]);
    let (client, server) = cookies(&out.stdout);
    assert_ne!(client, server);
    common::expect_lines(&out.stdout, &out.stderr, &[&format!("@[{server}]: 7")]);
    assert!(
        out.stdout.contains(&format!("@[{client}]: ")),
        "the client's socket saw the ACKs:\n{}",
        out.stdout
    );
}

/// Each record of a classic pcap file: (seconds, microseconds, bytes).
fn pcap_records(bytes: &[u8]) -> Vec<(u32, u32, Vec<u8>)> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let (caplen, len) = (word(at + 8) as usize, word(at + 12) as usize);
        assert_eq!(caplen, len, "captured and original lengths differ");
        out.push((
            word(at),
            word(at + 4),
            bytes[at + 16..at + 16 + caplen].to_vec(),
        ));
        at += 16 + caplen;
    }
    assert_eq!(at, bytes.len(), "a record runs past the end of the file");
    out
}

#[test]
fn skboutput_writes_each_packet_to_a_pcap_file() {
    require_root!();
    let path = scratch("skb.pcap");
    let script = format!(
        "rawtracepoint:net_dev_start_xmit /pid == cpid/ {{ @ret[skboutput(\"{}\", args.skb, args.skb.len, 14)] = count(); }}",
        path.display()
    );
    let out = trace_workload(&script, "tcp 7", &[]);
    let bytes = std::fs::read(&path).expect("the pcap file");
    std::fs::remove_file(&path).ok();
    // libpcap's header: magic, version 2.4, snap length 65535, LINKTYPE_RAW.
    assert_eq!(
        bytes[..24],
        [
            0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 101, 0,
            0, 0
        ]
    );
    let records = pcap_records(&bytes);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut data = 0;
    for (secs, usecs, packet) in &records {
        assert!(
            u64::from(*secs).abs_diff(now) < 120 && *usecs < 1_000_000,
            "time {secs}.{usecs}"
        );
        // IPv4 whose total length is the packet written, carrying TCP.
        assert_eq!(packet[0] >> 4, 4, "{packet:?}");
        assert_eq!(
            u16::from_be_bytes([packet[2], packet[3]]) as usize,
            packet.len()
        );
        assert_eq!(packet[9], 6);
        let tcp = &packet[usize::from(packet[0] & 15) * 4..];
        let payload = &tcp[usize::from(tcp[12] >> 4) * 4..];
        if !payload.is_empty() {
            assert_eq!(payload, b"x");
            data += 1;
        }
    }
    assert_eq!(data, 7, "{} packets", records.len());
    // Every call returned 0, once per packet written.
    common::expect_lines(
        &out.stdout,
        &out.stderr,
        &[&format!("@ret[0]: {}", records.len())],
    );
}
