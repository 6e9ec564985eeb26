//! The provider table, tested without root through `FixtureKernel`: names
//! and aliases, what `-l`/`-lv` list for each probe type (the listings `weft
//! -l` prints), and which probe types `-p PID` filters.

use ktypes::{FixtureKernel, TracingFeatures};
use sema::providers::{ListQuery, PROVIDERS, pid_filter_applies, provider_def};

fn list(
    kernel: &FixtureKernel,
    provider: &str,
    pattern: &str,
    verbose: bool,
) -> Result<Vec<String>, String> {
    let def = provider_def(provider).expect("a provider");
    let list = def.list.expect("a listing");
    let query = ListQuery {
        provider: def,
        pattern,
        verbose,
        pid: None,
    };
    list(&query, kernel)
}

#[test]
fn every_name_and_alias_is_one_provider() {
    let mut seen = Vec::new();
    for def in PROVIDERS {
        for name in std::iter::once(&def.name).chain(def.aliases) {
            assert!(!seen.contains(name), "`{name}` names two providers");
            seen.push(*name);
            assert_eq!(provider_def(name).map(|d| d.name), Some(def.name));
        }
    }
    assert_eq!(provider_def("kfunc").map(|d| d.name), Some("fentry"));
    assert_eq!(provider_def("t").map(|d| d.name), Some("tracepoint"));
    assert!(provider_def("watchpoint").is_none());
}

#[test]
fn tracepoints_list_with_their_fields() {
    let kernel = FixtureKernel::typical();
    assert_eq!(
        list(&kernel, "t", "syscalls:sys_*_read", true).unwrap(),
        [
            "tracepoint:syscalls:sys_enter_read",
            "    int __syscall_nr",
            "    unsigned int fd",
            "    char * buf",
            "    size_t count",
            "tracepoint:syscalls:sys_exit_read",
            "    int __syscall_nr",
            "    long ret",
        ]
    );
}

#[test]
fn kprobes_list_what_they_can_attach_through() {
    let kprobes = FixtureKernel::typical()
        .with_tracing_features(TracingFeatures::from_flags(true, false, true));
    assert_eq!(
        list(&kprobes, "kprobe", "vfs_read*", false).unwrap(),
        ["kprobe:vfs_read", "kprobe:vfs_readv"]
    );
    assert_eq!(
        list(&kprobes, "kr", "*open", false).unwrap(),
        ["kretprobe:ext4:ext4_file_open"]
    );
    let neither = FixtureKernel::typical()
        .with_tracing_features(TracingFeatures::from_flags(true, false, false));
    let err = list(&neither, "kprobe", "*", false).unwrap_err();
    assert!(
        err.starts_with("error: this kernel cannot attach kprobe probes, so none are listed:"),
        "{err}"
    );
}

#[test]
fn timers_list_their_units() {
    let kernel = FixtureKernel::typical();
    // The alias `p` lists as profile, each unit without a rate.
    assert_eq!(
        list(&kernel, "p", "*", false).unwrap(),
        ["profile:hz:", "profile:ms:", "profile:s:", "profile:us:"]
    );
    assert!(provider_def("BEGIN").unwrap().list.is_none());
}

#[test]
fn pid_filters_apply_to_event_probes_only() {
    for name in ["BEGIN", "END", "interval"] {
        assert!(!pid_filter_applies(name), "{name}");
    }
    for name in [
        "tracepoint",
        "kprobe",
        "uprobe",
        "usdt",
        "profile",
        "software",
        "rawtracepoint",
    ] {
        assert!(pid_filter_applies(name), "{name}");
    }
}
