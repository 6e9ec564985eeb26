//! `SysKernelInfo`, tracefs and feature probes on the live kernel.

mod common;

use ktypes::{KernelInfo, KernelInfoError};
use runtime::tracefs::Tracefs;
use runtime::{Features, SysKernelInfo};

#[test]
fn tracepoint_formats_come_from_tracefs() {
    testgate::require_root!();
    let k = SysKernelInfo::new();
    let f = k.tracepoint_format("syscalls", "sys_enter_openat").unwrap();
    assert_eq!(f.name, "sys_enter_openat");
    assert!(f.id > 0);
    assert!(f.field("filename").is_some(), "{f:?}");
    assert!(matches!(
        k.tracepoint_format("syscalls", "sys_enter_weft_nope"),
        Err(KernelInfoError::NotFound(_))
    ));
    assert!(matches!(
        k.tracepoint_format("..", "x"),
        Err(KernelInfoError::NotFound(_))
    ));

    let all = k.tracepoints().unwrap();
    assert!(all.len() > 100);
    assert!(all.windows(2).all(|w| w[0] < w[1]), "sorted, no duplicates");
    assert!(all.contains(&("syscalls".into(), "sys_enter_getppid".into())));

    let t = Tracefs::shared().unwrap();
    assert_eq!(t.id("syscalls", "sys_enter_openat").unwrap(), f.id as u64);
}

/// The tracefs lines of this process's mount table.
fn tracefs_mounts() -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(" - tracefs "))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_tracefs_of_our_own_serves_every_thread_and_shows_in_no_mount_table() {
    testgate::require_root!();
    let mounts_before = tracefs_mounts();
    // Made on a thread that then ends, in a process with threads (the
    // harness's), where a mount namespace of its own moves only the
    // calling thread: the other threads read through it all the same.
    let own = std::thread::spawn(|| Tracefs::mount_own().unwrap())
        .join()
        .unwrap();
    assert!(own.is_own_mount());
    let id = own.id("syscalls", "sys_enter_getppid").unwrap();
    let from_another_thread = std::thread::scope(|s| {
        s.spawn(|| own.id("syscalls", "sys_enter_getppid").unwrap())
            .join()
            .unwrap()
    });
    assert_eq!(from_another_thread, id);
    let k = SysKernelInfo::new();
    assert_eq!(
        k.tracepoint_format("syscalls", "sys_enter_getppid")
            .unwrap()
            .id as u64,
        id
    );
    assert!(
        own.tracepoints()
            .unwrap()
            .contains(&("syscalls".into(), "sys_enter_getppid".into()))
    );
    assert_eq!(tracefs_mounts(), mounts_before, "no mount table shows it");
    assert_eq!(
        own.to_string(),
        "weft's own detached mount, not on the system"
    );
}

#[test]
fn features_of_this_kernel() {
    testgate::require_root!();
    let f = Features::probe();
    eprintln!("{f:#?}");
    assert!(!f.kernel_release.is_empty());
    assert_eq!(
        f.btf_vmlinux.is_yes(),
        std::path::Path::new("/sys/kernel/btf/vmlinux").exists()
    );
    assert!(f.tracefs.is_ok());
    assert!(f.ringbuf.is_yes(), "{:?}", f.ringbuf);
    assert!(f.perf_software.is_yes(), "{:?}", f.perf_software);
    let caps = f.capabilities.unwrap();
    assert!(caps.bpf && caps.perfmon);
}
