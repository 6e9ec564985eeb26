//! Functions of bpftrace that weft recognises but does not compile yet:
//! the checker says so instead of "unknown function".

const PLANNED: &[&str] = &[
    "kaddr",
    "system",
    "signal",
    "override",
    "cgroupid",
    "macaddr",
    "path",
    "strncmp",
    "strcontains",
    "has_key",
    "len",
    "sizeof",
    "kptr",
    "uptr",
    "unwatch",
    "skboutput",
    "pton",
    "offsetof",
    "errorf",
    "warnf",
    "debugf",
    "percpu_kaddr",
    "socket_cookie",
    "fail",
    "tseries",
    "nsecs",
];

pub fn planned_function(name: &str) -> bool {
    PLANNED.contains(&name)
}
