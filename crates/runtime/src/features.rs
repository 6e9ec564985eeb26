//! What this kernel and process can do: the facts behind `weft --info`.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;

use libbpf_rs::libbpf_sys;

use crate::libbpf_log::silence_libbpf;
use crate::sys;
use crate::tracefs::Tracefs;

pub use ktypes::Support;

/// Effective capabilities that matter to weft (from `/proc/self/status` `CapEff`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// `CAP_BPF` (39): load programs, create maps.
    pub bpf: bool,
    /// `CAP_PERFMON` (38): tracing programs, perf events.
    pub perfmon: bool,
    /// `CAP_SYS_ADMIN` (21): implies the two above; mounting tracefs.
    pub sys_admin: bool,
    /// `CAP_SYS_RESOURCE` (24): raising `RLIMIT_MEMLOCK` (only old kernels need it).
    pub sys_resource: bool,
}

impl Capabilities {
    /// From the hex `CapEff` mask.
    pub fn from_mask(mask: u64) -> Capabilities {
        let has = |bit: u32| mask & (1u64 << bit) != 0;
        Capabilities {
            bpf: has(39),
            perfmon: has(38),
            sys_admin: has(21),
            sys_resource: has(24),
        }
    }

    /// Parses `/proc/<pid>/status` text.
    pub fn from_status(status: &str) -> Option<Capabilities> {
        let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
        let hex = line["CapEff:".len()..].trim();
        u64::from_str_radix(hex, 16)
            .ok()
            .map(Capabilities::from_mask)
    }
}

/// What this kernel supports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Features {
    /// `uname -r`.
    pub kernel_release: String,
    /// `/sys/kernel/btf/vmlinux` exists (struct layouts, `tp_btf`, fentry).
    pub btf_vmlinux: Support,
    /// Where tracefs is (its path, or that weft made a mount of its own).
    pub tracefs: Result<String, String>,
    /// kprobes: the `kprobe` perf PMU or tracefs `kprobe_events`.
    pub kprobes: Support,
    /// fentry/fexit: a BPF trampoline program loads (`kernel_features::trampolines`).
    pub trampolines: Support,
    /// BTF-typed raw tracepoints (`tp_btf`): a program loads (`kernel_features::tp_btf`).
    pub tp_btf: Support,
    /// `kprobe_multi` links (one link for many kernel functions).
    pub kprobe_multi: Support,
    /// `uprobe_multi` links (one link for many user-space functions).
    pub uprobe_multi: Support,
    /// A `BPF_MAP_TYPE_RINGBUF` map can be created.
    pub ringbuf: Support,
    /// A software `cpu-clock` perf event can be opened (`profile`, `interval`).
    pub perf_software: Support,
    /// A hardware PMU is exposed (`hardware:` probes).
    pub hardware_pmu: Support,
    /// The kernel lockdown mode (`none`, `integrity`, `confidentiality`), if known.
    pub lockdown: Option<String>,
    pub capabilities: Option<Capabilities>,
}

impl Features {
    /// Probes the running kernel. Cheap: a few file reads, one map and one perf event.
    pub fn probe() -> Features {
        silence_libbpf();
        let shared = Tracefs::shared();
        let kprobe_events = shared
            .as_ref()
            .is_ok_and(|t| t.root().join("kprobe_events").exists());
        let tracefs = shared.map(|t| t.to_string()).map_err(|e| e.to_string());
        let kprobe_pmu = Path::new("/sys/bus/event_source/devices/kprobe/type").exists();
        Features {
            kernel_release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            btf_vmlinux: Support::from_bool(
                Path::new("/sys/kernel/btf/vmlinux").exists(),
                "no /sys/kernel/btf/vmlinux (kernel built without CONFIG_DEBUG_INFO_BTF)",
            ),
            tracefs,
            kprobes: Support::from_bool(
                kprobe_pmu || kprobe_events,
                "no kprobe PMU and no kprobe_events (kernel built without CONFIG_KPROBES)",
            ),
            trampolines: crate::kernel_features::trampolines(),
            tp_btf: crate::kernel_features::tp_btf(),
            kprobe_multi: crate::kernel_features::kprobe_multi(),
            uprobe_multi: crate::kernel_features::uprobe_multi(),
            ringbuf: probe_ringbuf(),
            perf_software: probe_perf_software(),
            hardware_pmu: Support::from_bool(
                Path::new("/sys/bus/event_source/devices/cpu").exists(),
                "no /sys/bus/event_source/devices/cpu (no hardware PMU exposed, e.g. in a VM)",
            ),
            lockdown: std::fs::read_to_string("/sys/kernel/security/lockdown")
                .ok()
                .and_then(|s| parse_lockdown(&s)),
            capabilities: std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|s| Capabilities::from_status(&s)),
        }
    }
}

/// The bracketed mode of `/sys/kernel/security/lockdown` (`none [integrity] confidentiality`).
pub fn parse_lockdown(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

fn probe_ringbuf() -> Support {
    let size = sys::page_size() as u32;
    // SAFETY: creating a map with valid arguments; NULL name and opts are allowed.
    let fd = unsafe {
        libbpf_sys::bpf_map_create(
            libbpf_sys::BPF_MAP_TYPE_RINGBUF,
            std::ptr::null(),
            0,
            0,
            size,
            std::ptr::null(),
        )
    };
    if fd < 0 {
        return Support::No(format!(
            "creating a ring buffer map failed: {}",
            std::io::Error::from_raw_os_error(-fd)
        ));
    }
    // SAFETY: a fresh fd we own; dropping closes it.
    drop(unsafe { OwnedFd::from_raw_fd(fd) });
    Support::Yes
}

fn probe_perf_software() -> Support {
    let attr = sys::perf_attr(
        libbpf_sys::PERF_TYPE_SOFTWARE,
        libbpf_sys::PERF_COUNT_SW_CPU_CLOCK as u64,
    );
    match sys::perf_event_open(&attr, -1, 0) {
        Ok(_fd) => Support::Yes,
        Err(e) => Support::No(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_from_cap_eff() {
        // CAP_BPF | CAP_PERFMON | CAP_SYS_ADMIN, no CAP_SYS_RESOURCE.
        let mask = (1u64 << 39) | (1 << 38) | (1 << 21);
        let status = format!("Name:\tx\nCapEff:\t{mask:016x}\n");
        let caps = Capabilities::from_status(&status).unwrap();
        assert_eq!(
            caps,
            Capabilities {
                bpf: true,
                perfmon: true,
                sys_admin: true,
                sys_resource: false
            }
        );
    }

    #[test]
    fn lockdown_mode_is_the_bracketed_word() {
        assert_eq!(
            parse_lockdown("none [integrity] confidentiality\n").as_deref(),
            Some("integrity")
        );
        assert_eq!(parse_lockdown("garbage"), None);
    }
}
