//! Builtins of bpftrace that weft recognises but does not compile yet: the
//! checker says so instead of "unknown".

/// Functions.
const FUNCTIONS: &[&str] = &["sizeof", "unwatch", "offsetof", "fail"];

/// Variables (`argN` past what a probe has is planned too, in tracepoints).
const VARIABLES: &[&str] = &["sarg0", "sarg1", "sarg2"];

pub fn planned_function(name: &str) -> bool {
    FUNCTIONS.contains(&name)
}

pub fn planned_variable(name: &str) -> bool {
    VARIABLES.contains(&name) || (name.starts_with("arg") && name[3..].parse::<u32>().is_ok())
}
