//! `--info`: what this kernel supports, in plain words.

use std::fmt::Write as _;

use runtime::{Features, Support};

pub fn render(f: &Features) -> String {
    let mut s = String::new();
    let yes_no = |x: &Support| match x {
        Support::Yes => "yes".to_string(),
        Support::No(why) => format!("no ({why})"),
    };
    let _ = writeln!(s, "weft {}", env!("CARGO_PKG_VERSION"));
    let _ = writeln!(s, "kernel: {}", f.kernel_release);
    let _ = writeln!(
        s,
        "  BTF (/sys/kernel/btf/vmlinux): {}",
        yes_no(&f.btf_vmlinux)
    );
    let _ = writeln!(
        s,
        "  tracefs: {}",
        match &f.tracefs {
            Ok(path) => format!("yes, at {path}"),
            Err(e) => format!("no ({e})"),
        }
    );
    let _ = writeln!(s, "  kprobes: {}", yes_no(&f.kprobes));
    let _ = writeln!(
        s,
        "  fentry/fexit (BPF trampolines): {}",
        yes_no(&f.trampolines)
    );
    let _ = writeln!(s, "  kprobe_multi links: {}", yes_no(&f.kprobe_multi));
    let _ = writeln!(s, "  uprobe_multi links: {}", yes_no(&f.uprobe_multi));
    let _ = writeln!(s, "  ring buffer: {}", yes_no(&f.ringbuf));
    let _ = writeln!(
        s,
        "  perf software events (interval, profile): {}",
        yes_no(&f.perf_software)
    );
    let _ = writeln!(
        s,
        "  hardware PMU (hardware: probes): {}",
        yes_no(&f.hardware_pmu)
    );
    let _ = writeln!(
        s,
        "  lockdown: {}",
        f.lockdown
            .as_deref()
            .unwrap_or("unknown (no /sys/kernel/security/lockdown)")
    );
    match &f.capabilities {
        Some(c) => {
            let _ = writeln!(
                s,
                "  capabilities: CAP_BPF {}, CAP_PERFMON {}, CAP_SYS_ADMIN {}, CAP_SYS_RESOURCE {}",
                c.bpf, c.perfmon, c.sys_admin, c.sys_resource
            );
        }
        None => {
            let _ = writeln!(s, "  capabilities: unknown");
        }
    }
    s
}
