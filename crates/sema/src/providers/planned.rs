//! Providers the language has and weft recognises, whose compilation is
//! not implemented yet: the checker names them instead of "unknown provider".

/// Names and aliases, with the canonical name.
pub const NAMES: &[(&[&str], &str)] = &[
    (&["kprobe", "k"], "kprobe"),
    (&["kretprobe", "kr"], "kretprobe"),
    (&["uprobe", "u"], "uprobe"),
    (&["uretprobe", "ur"], "uretprobe"),
    (&["usdt", "U"], "usdt"),
    (&["profile", "p"], "profile"),
    (&["software", "s"], "software"),
    (&["hardware", "h"], "hardware"),
    (&["watchpoint", "w"], "watchpoint"),
    (&["asyncwatchpoint", "aw"], "asyncwatchpoint"),
    (&["kfunc", "fentry", "f"], "fentry"),
    (&["kretfunc", "fexit", "fr"], "fexit"),
    (&["rawtracepoint", "rt"], "rawtracepoint"),
    (&["iter", "it"], "iter"),
    (&["self"], "self"),
    (&["test"], "test"),
    (&["bench"], "bench"),
];

pub fn canonical(name: &str) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, c)| *c)
}
