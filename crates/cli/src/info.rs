//! `--info`: what this kernel supports, in plain words, and so which probe
//! types (every one of `sema::providers::PROVIDERS`) can run here.

use std::fmt::Write as _;

use ktypes::TracingFeatures;
use runtime::{Features, Support};
use sema::mechanism::{Mechanism, Usage, Written, choose};
use sema::providers::{Needs, PROVIDERS, ProviderDef};

/// Whether this kernel can run probes of `p`, and how.
fn provider_support(p: &ProviderDef, f: &Features) -> String {
    let support = match p.needs {
        Needs::Bpf => Support::Yes,
        Needs::Tracefs => match &f.tracefs {
            Ok(_) => Support::Yes,
            Err(e) => Support::No(format!("no tracefs: {e}")),
        },
        Needs::PerfSoftware => f.perf_software.clone(),
        Needs::HardwarePmu => f.hardware_pmu.clone(),
        Needs::TpBtf => f.tp_btf.clone(),
        Needs::KernelFunctions => {
            let Some(written) = Written::of_provider(p.name) else {
                return "yes".into();
            };
            let features = TracingFeatures {
                btf: f.btf_vmlinux.clone(),
                trampolines: f.trampolines.clone(),
                kprobes: f.kprobes.clone(),
            };
            let choice = choose(written, &features, Usage::default());
            return match choice.mechanism {
                Mechanism::Neither(why) => format!("no ({why})"),
                Mechanism::Fentry if !matches!(written, Written::Fentry | Written::Fexit) => {
                    format!("yes ({})", choice.why)
                }
                Mechanism::Kprobe if matches!(written, Written::Fentry | Written::Fexit) => {
                    format!("yes ({})", choice.why)
                }
                _ => "yes".into(),
            };
        }
    };
    match support {
        Support::Yes => "yes".into(),
        Support::No(why) => format!("no ({why})"),
    }
}

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
            Ok(place) => format!("yes, {place}"),
            Err(e) => format!("no ({e})"),
        }
    );
    let _ = writeln!(s, "  kprobes: {}", yes_no(&f.kprobes));
    let _ = writeln!(
        s,
        "  fentry/fexit (BPF trampolines): {}",
        yes_no(&f.trampolines)
    );
    let _ = writeln!(
        s,
        "  tp_btf (BTF-typed raw tracepoints): {}",
        yes_no(&f.tp_btf)
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
    let _ = writeln!(s, "probe types:");
    for p in PROVIDERS {
        let aliases = if p.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also {})", p.aliases.join(", "))
        };
        let _ = writeln!(s, "  {}{aliases}: {}", p.usage, provider_support(p, f));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features(kprobes: bool, trampolines: bool) -> Features {
        let yes_if = |ok: bool| Support::from_bool(ok, "missing here");
        Features {
            kernel_release: "6.18".into(),
            btf_vmlinux: Support::Yes,
            tracefs: Ok("/sys/kernel/tracing".into()),
            kprobes: yes_if(kprobes),
            trampolines: yes_if(trampolines),
            tp_btf: Support::Yes,
            kprobe_multi: Support::Yes,
            uprobe_multi: Support::Yes,
            ringbuf: Support::Yes,
            perf_software: Support::Yes,
            hardware_pmu: Support::No("no PMU".into()),
            lockdown: None,
            capabilities: None,
        }
    }

    fn line<'a>(text: &'a str, start: &str) -> &'a str {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no `{start}` line in:\n{text}"))
    }

    /// Every probe type of the provider table gets a line, with what this
    /// kernel lets it do.
    #[test]
    fn probe_types_say_whether_they_run_here() {
        let text = render(&features(false, true));
        for p in PROVIDERS {
            line(&text, p.usage);
        }
        assert_eq!(
            line(&text, "fentry:").trim_start(),
            "fentry:[MODULE:]FUNCTION (also kfunc, f): yes"
        );
        assert!(
            line(&text, "kprobe:").contains("yes (kprobe runs as fentry"),
            "{text}"
        );
        assert!(line(&text, "hardware:").ends_with("no (no PMU)"));
        let text = render(&features(false, false));
        assert!(
            line(&text, "kretprobe:").contains(": no (the kernel has no kprobes"),
            "{text}"
        );
    }
}
