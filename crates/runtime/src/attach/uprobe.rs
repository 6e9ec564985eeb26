//! `uprobe`, `uretprobe` and `usdt`: a perf event of the kernel's `uprobe`
//! PMU on a file offset, optionally limited to one process, optionally with
//! a USDT semaphore the kernel increments while the probe is attached
//! (`ref_ctr_offset`). The PMU's type and the bit positions of its
//! `retprobe` flag and `ref_ctr_offset` field come from sysfs, as the
//! kernel documents in `Documentation/ABI/testing/sysfs-bus-event_source-devices-*`.

use std::ffi::CString;
use std::io;
use std::os::fd::OwnedFd;

use crate::error::{AttachError, SyscallError};
use crate::sys;

const PMU: &str = "/sys/bus/event_source/devices/uprobe";

/// Where to attach: what [`abi::Attach::Uprobe`] carries.
pub(super) struct Target<'a> {
    pub path: &'a str,
    pub offset: u64,
    pub retprobe: bool,
    pub pid: Option<u32>,
    pub ref_ctr_offset: u64,
}

pub(super) fn open(t: &Target<'_>, probe: &str) -> Result<OwnedFd, AttachError> {
    let read = |file: &str| {
        std::fs::read_to_string(format!("{PMU}/{file}")).map_err(|e| {
            super::classify(
                probe,
                SyscallError::new("read the uprobe PMU description in sysfs", e),
                "CAP_SYS_ADMIN",
            )
        })
    };
    let pmu_type: u32 = read("type")?.trim().parse().map_err(|_| {
        super::classify(
            probe,
            SyscallError::new(
                "parse the uprobe PMU type",
                io::Error::from(io::ErrorKind::InvalidData),
            ),
            "CAP_SYS_ADMIN",
        )
    })?;
    let mut config = 0u64;
    if t.retprobe {
        let bit = config_field(&read("format/retprobe")?).map_or(0, |(lo, _)| lo);
        config |= 1 << bit;
    }
    if t.ref_ctr_offset != 0 {
        // Older kernels have no semaphore support: the format file is missing.
        let (lo, width) = read("format/ref_ctr_offset")
            .ok()
            .and_then(|f| config_field(&f))
            .ok_or_else(|| AttachError::Unsupported {
                probe: probe.to_string(),
                source: SyscallError::new(
                    "uprobe ref_ctr_offset (USDT semaphores)",
                    io::Error::from_raw_os_error(libc::EOPNOTSUPP),
                ),
            })?;
        let mask = if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        config |= (t.ref_ctr_offset & mask) << lo;
    }
    if let Some(vector) = vector_instruction_at(t.path, t.offset) {
        return Err(AttachError::UprobeRefused {
            probe: probe.to_string(),
            path: t.path.to_string(),
            offset: t.offset,
            why: VECTOR_INSTRUCTION,
            next: vector.len.and_then(|len| probe_after(probe, len)),
        });
    }
    let path = CString::new(t.path).map_err(|_| AttachError::Other {
        probe: probe.to_string(),
        source: SyscallError::new("uprobe path", io::Error::from(io::ErrorKind::InvalidInput)),
    })?;
    let mut attr = sys::perf_attr(pmu_type, config);
    attr.__bindgen_anon_3.uprobe_path = path.as_ptr() as u64;
    attr.__bindgen_anon_4.probe_offset = t.offset;
    // One process on any CPU, or every process (an event opened on CPU 0, as libbpf does).
    let (pid, cpu) = match t.pid {
        Some(pid) => (pid as i32, -1),
        None => (-1, 0),
    };
    let fd = sys::perf_event_open(&attr, pid, cpu);
    drop(path);
    fd.map_err(|e| match e.errno() {
        // ENOTSUPP (kernel-internal 524): the instruction cannot be probed.
        Some(524) => AttachError::UprobeRefused {
            probe: probe.to_string(),
            path: t.path.to_string(),
            offset: t.offset,
            why: "the kernel cannot place a uprobe on this instruction",
            next: None,
        },
        _ => super::classify(probe, e, "CAP_PERFMON"),
    })
}

const VECTOR_INSTRUCTION: &str = "weft places no uprobe on a vector (VEX/EVEX) instruction, which kernels single-step unreliably (the probed processes compute wrong results)";

/// A vector-encoded instruction, and its length when known.
struct VectorInstruction {
    len: Option<usize>,
}

/// The vector-encoded instruction at `offset` of the file, if there is one.
/// A file that cannot be read here is left to the kernel, which reports it.
fn vector_instruction_at(path: &str, offset: u64) -> Option<VectorInstruction> {
    use std::io::{Read, Seek, SeekFrom};
    let mut code = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| {
            f.seek(SeekFrom::Start(offset))?;
            f.read(&mut code)
        })
        .ok()?;
    let code = &code[..n];
    uelf::is_vector_instruction(code).then(|| VectorInstruction {
        len: uelf::decode(code).ok().map(|i| i.len),
    })
}

/// `probe` moved `len` bytes on (`uprobe:BIN:FUNC` gives `uprobe:BIN:FUNC+len`,
/// `FUNC+K` gives `FUNC+(K+len)`, an address the address after). None for
/// uretprobes, which take no offset.
fn probe_after(probe: &str, len: usize) -> Option<String> {
    let len = len as u64;
    let (head, target) = probe.rsplit_once(':')?;
    if !head.starts_with("uprobe:") {
        return None;
    }
    let number = |text: &str| match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse::<u64>().ok(),
    };
    let moved = match target.rsplit_once('+') {
        Some((func, offset)) => format!("{func}+{}", number(offset)? + len),
        None => match number(target) {
            Some(address) => format!("{:#x}", address + len),
            None => format!("{target}+{len}"),
        },
    };
    Some(format!("{head}:{moved}"))
}

/// Parses a PMU format file such as `config:0` or `config:32-63` into the
/// field's lowest bit and width. Fields in `config1`/`config2` are not ours.
fn config_field(text: &str) -> Option<(u32, u32)> {
    let bits = text.trim().strip_prefix("config:")?;
    let (lo, hi) = match bits.split_once('-') {
        Some((lo, hi)) => (lo.parse().ok()?, hi.parse().ok()?),
        None => {
            let b: u32 = bits.parse().ok()?;
            (b, b)
        }
    };
    (lo <= hi && hi < 64).then(|| (lo, hi - lo + 1))
}

#[cfg(test)]
mod tests {
    use super::{config_field, probe_after};

    #[test]
    fn the_probe_on_the_next_instruction() {
        let libc = "uprobe:/lib/x86_64-linux-gnu/libc.so.6";
        assert_eq!(
            probe_after(&format!("{libc}:strchr"), 6),
            Some(format!("{libc}:strchr+6"))
        );
        assert_eq!(
            probe_after(&format!("{libc}:strchr+6"), 4),
            Some(format!("{libc}:strchr+10"))
        );
        assert_eq!(
            probe_after(&format!("{libc}:strchr+0x6"), 4),
            Some(format!("{libc}:strchr+10"))
        );
        assert_eq!(
            probe_after("uprobe:/bin/x:0x1000", 5),
            Some("uprobe:/bin/x:0x1005".into())
        );
        assert_eq!(probe_after(&format!("ur{}:strchr", &libc[1..]), 6), None);
    }

    #[test]
    fn pmu_format_fields() {
        assert_eq!(config_field("config:0\n"), Some((0, 1)));
        assert_eq!(config_field("config:32-63\n"), Some((32, 32)));
        assert_eq!(config_field("config1:0-63"), None);
        assert_eq!(config_field("config:9-3"), None);
        assert_eq!(config_field("config:64"), None);
        assert_eq!(config_field(""), None);
    }
}
