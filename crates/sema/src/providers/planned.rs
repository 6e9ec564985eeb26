//! Providers the language has and weft recognises, whose compilation is
//! not implemented yet: the checker names them instead of "unknown provider".

/// Names and aliases, with the canonical name.
pub const NAMES: &[(&[&str], &str)] = &[
    (&["watchpoint", "w"], "watchpoint"),
    (&["asyncwatchpoint", "aw"], "asyncwatchpoint"),
    (&["test"], "test"),
];

pub fn canonical(name: &str) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, c)| *c)
}
