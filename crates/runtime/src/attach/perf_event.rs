//! `profile`, `software` and `hardware`: a sampling perf event on every
//! online CPU, each linked to the program. `interval` shares [`open_on`]
//! with a single CPU.

use std::os::fd::OwnedFd;
use std::path::Path;

use libbpf_rs::libbpf_sys;

use crate::error::{AttachError, SyscallError};
use crate::sys;

/// Opens a sampling perf event of `event_type`/`config` on `cpu` (any
/// process) that fires every `period` events.
pub(super) fn open_on(
    event_type: u32,
    config: u64,
    period: u64,
    cpu: i32,
) -> Result<OwnedFd, SyscallError> {
    let mut attr = sys::perf_attr(event_type, config);
    attr.__bindgen_anon_1.sample_period = period.max(1);
    sys::perf_event_open(&attr, -1, cpu)
}

/// One perf event per online CPU.
pub(super) fn open_all(
    event_type: u32,
    config: u64,
    period: u64,
    probe: &str,
) -> Result<Vec<OwnedFd>, AttachError> {
    let hardware = event_type == libbpf_sys::PERF_TYPE_HARDWARE;
    if hardware && !has_cpu_pmu(Path::new("/sys/bus/event_source/devices")) {
        return Err(AttachError::NoPmu {
            probe: probe.to_string(),
        });
    }
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").map_err(|e| {
        AttachError::Other {
            probe: probe.to_string(),
            source: SyscallError::new("read /sys/devices/system/cpu/online", e),
        }
    })?;
    let cpus = parse_cpu_list(&online).ok_or_else(|| AttachError::Other {
        probe: probe.to_string(),
        source: SyscallError::new(
            "parse /sys/devices/system/cpu/online",
            std::io::Error::from(std::io::ErrorKind::InvalidData),
        ),
    })?;
    let mut fds = Vec::with_capacity(cpus.len());
    for cpu in cpus {
        match open_on(event_type, config, period, cpu as i32) {
            Ok(fd) => fds.push(fd),
            Err(e)
                if hardware
                    && matches!(
                        e.errno(),
                        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV)
                    ) =>
            {
                return Err(AttachError::NoPmu {
                    probe: probe.to_string(),
                });
            }
            Err(e) => return Err(super::classify(probe, e, "CAP_PERFMON")),
        }
    }
    Ok(fds)
}

/// Whether the kernel registered a CPU PMU (`cpu`, or `cpu_core`/`cpu_atom`
/// on hybrid parts) under `devices` (`/sys/bus/event_source/devices`).
fn has_cpu_pmu(devices: &Path) -> bool {
    ["cpu", "cpu_core", "cpu_atom", "armv8_pmuv3_0"]
        .iter()
        .any(|name| devices.join(name).exists())
}

/// `0-3,5,7-8` (the format of `/sys/devices/system/cpu/online`) as CPU numbers.
fn parse_cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    (!cpus.is_empty()).then_some(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(parse_cpu_list("0,2-4,7"), Some(vec![0, 2, 3, 4, 7]));
        assert_eq!(parse_cpu_list("0"), Some(vec![0]));
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn no_pmu_in_an_empty_directory() {
        let dir = std::env::temp_dir().join(format!("weft-pmu-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("software")).unwrap();
        assert!(!has_cpu_pmu(&dir));
        std::fs::create_dir_all(dir.join("cpu")).unwrap();
        assert!(has_cpu_pmu(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
