//! Issue 16, defect 1: equal strings are one map key, whichever way the
//! string reaches the key. The kernel hashes every byte of a key, so a
//! string must be zero from its terminator to the end of its buffer; before
//! the fix, bytes left over from a longer string written earlier made
//! `"ab"` several keys (`@c[ab]: 1` twice, and duplicate JSON object keys).
//!
//! One table, one row per path a string takes to a key: a map value read
//! back, a variable, a tuple field, a stream field and the results of
//! `str()`, `comm`, `func`, `probe` and a tracepoint's `char[]` field.
//! Each row is run in text and in JSON; the JSON map must have no
//! duplicate object keys.

mod common;

use std::time::Duration;

/// One path by which a string reaches a key of `@c`.
struct Case {
    name: &'static str,
    /// The script; `{workload}` is replaced by the workload's path.
    script: &'static str,
    /// Workload steps (the script runs under `-c`), or `None` for a
    /// BEGIN-only script.
    steps: Option<&'static str>,
    /// Every `@c` line weft must print (in any order), nothing else.
    expected: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        // The issue's reproducer; bpftrace 0.17 prints exactly these lines.
        name: "map value read back",
        script: r#"BEGIN { @s[1]="ab"; @c[@s[1]]=count(); @s[2]="abcdefghijkl"; @c[@s[2]]=count(); @s[3]="ab"; @c[@s[3]]=count(); clear(@s); exit(); }"#,
        steps: None,
        expected: &["@c[abcdefghijkl]: 1", "@c[ab]: 2"],
    },
    Case {
        name: "missing map value read back",
        script: r#"BEGIN { @s[1] = "abcdefghijkl"; @c[@s[7]] = count(); @c[""] = count(); clear(@s); exit(); }"#,
        steps: None,
        expected: &["@c[]: 2"],
    },
    Case {
        name: "variable",
        script: r#"BEGIN { $v = "abcdefghijkl"; @c[$v] = count(); $v = "ab"; @c[$v] = count(); @c["ab"] = count(); exit(); }"#,
        steps: None,
        expected: &["@c[abcdefghijkl]: 1", "@c[ab]: 2"],
    },
    Case {
        name: "ternary",
        script: r#"BEGIN { $v = "abcdefghijkl"; $v = $v == "x" ? "cd" : "ab"; @c[$v] = count(); @c["ab"] = count(); exit(); }"#,
        steps: None,
        expected: &["@c[ab]: 2"],
    },
    Case {
        name: "tuple variable",
        script: r#"BEGIN { $t = ("abcdefghijkl", 1); $t = ("ab", 1); @c[$t] = count(); @c[("ab", 1)] = count(); exit(); }"#,
        steps: None,
        expected: &["@c[ab, 1]: 2"],
    },
    Case {
        name: "tuple map value read back",
        script: r#"BEGIN { @t[1] = ("abcdefghijkl", 1); @t[1] = ("ab", 1); @c[@t[1]] = count(); @c[("ab", 1)] = count(); clear(@t); exit(); }"#,
        steps: None,
        expected: &["@c[ab, 1]: 2"],
    },
    Case {
        // A tuple whose string field is narrower than the key's.
        name: "narrower tuple",
        script: r#"BEGIN { $t = ("ab", 1); @c[$t] = count(); @c[("abcdefgh", 1)] = count(); @c[("ab", 1)] = count(); exit(); }"#,
        steps: None,
        expected: &["@c[abcdefgh, 1]: 1", "@c[ab, 1]: 2"],
    },
    Case {
        name: "map value in a multi-part key",
        script: r#"BEGIN { @s[1] = "abcdefghijkl"; @s[1] = "ab"; @c[@s[1], 2] = count(); @c["ab", 2] = count(); clear(@s); exit(); }"#,
        steps: None,
        expected: &["@c[ab, 2]: 2"],
    },
    Case {
        name: "str() result",
        // O_CREAT (64): the workload's own opens, not the loader's.
        script: r#"tracepoint:syscalls:sys_enter_openat /pid == cpid && (args->flags & 64)/ { $f = "abcdefghijklmnopqrstuvwxyz0123456789"; $f = str(args->filename); @c[$f] = count(); @c[str(args->filename)] = count(); }"#,
        steps: Some("openat /tmp/weft-sk 3"),
        expected: &["@c[/tmp/weft-sk]: 6"],
    },
    Case {
        name: "comm",
        script: r#"tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { $a = "abcdefghijklmnopqrstuvwxyz"; $a = comm; @c[$a] = count(); @c[comm] = count(); }"#,
        steps: Some("getppid 3"),
        expected: &["@c[weftwl]: 6"],
    },
    Case {
        name: "probe",
        script: r#"tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { $a = "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"; $a = probe; @c[$a] = count(); @c[probe] = count(); }"#,
        steps: Some("getppid 2"),
        expected: &["@c[tracepoint:syscalls:sys_enter_getppid]: 4"],
    },
    Case {
        name: "func",
        // `func` is a `usym` (an address and a pid), as in bpftrace.
        script: r#"uprobe:{workload}:weft_workload_marker { $a = func; @c[$a] = count(); @c[func] = count(); }"#,
        steps: Some("call 3"),
        expected: &["@c[weft_workload_marker]: 6"],
    },
    Case {
        name: "tracepoint char[] field",
        script: r#"tracepoint:task:task_rename /args->pid == cpid/ { $a = "abcdefghijklmnopqrstuvwxyz"; $a = args->newcomm; @c[$a] = count(); @c[args->newcomm] = count(); }"#,
        // exec names the process `weft-workload`, then it names itself `weftwl`.
        steps: Some("getppid 1"),
        expected: &["@c[weft-workload]: 2", "@c[weftwl]: 2"],
    },
    Case {
        name: "stream field",
        script: r#"stream s {
    begin tracepoint:syscalls:sys_enter_getppid /pid == cpid/ by tid { $n = "abcdefghijkl"; $n = "ab"; }
    end tracepoint:syscalls:sys_exit_getppid by tid
}
stream:s { @c[args->n] = count(); }
tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @c["ab"] = count(); }"#,
        steps: Some("getppid 3"),
        expected: &["@c[ab]: 6"],
    },
];

#[test]
fn equal_strings_are_one_key_on_every_path() {
    require_root!();
    let workload = common::workload();
    let mut failures = Vec::new();
    for case in CASES {
        let script = case
            .script
            .replace("{workload}", workload.to_str().unwrap());
        for json in [false, true] {
            let out = run(&script, case.steps, json);
            let got = if json {
                json_lines(&out.stdout)
            } else {
                text_lines(&out.stdout)
            };
            let got = got.and_then(|mut lines| {
                lines.sort();
                let mut want: Vec<String> = case.expected.iter().map(|s| s.to_string()).collect();
                want.sort();
                if lines == want {
                    Ok(())
                } else {
                    Err(format!("expected {want:?}, got {lines:?}"))
                }
            });
            if let Err(e) = got {
                failures.push(format!(
                    "{} ({}): {e}\nstdout:\n{}\nstderr:\n{}",
                    case.name,
                    if json { "json" } else { "text" },
                    out.stdout,
                    out.stderr
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn run(script: &str, steps: Option<&str>, json: bool) -> common::Outcome {
    let mut args = vec!["-q"];
    if json {
        args.extend(["-f", "json"]);
    }
    let cmd;
    if let Some(steps) = steps {
        cmd = format!("{} {steps}", common::workload().display());
        args.extend(["-c", cmd.as_str()]);
    }
    args.extend(["-e", script]);
    let out = common::run_weft(&args, Duration::from_secs(30));
    assert!(!out.timed_out, "weft timed out: {}", out.stderr);
    out
}

/// The `@c[...]` lines of text output.
fn text_lines(stdout: &str) -> Result<Vec<String>, String> {
    Ok(stdout
        .lines()
        .filter(|l| l.starts_with("@c["))
        .map(str::to_string)
        .collect())
}

/// The `@c` map of JSON output, written as text lines (`@c[ab, 1]: 2`);
/// an error if an object key repeats.
fn json_lines(stdout: &str) -> Result<Vec<String>, String> {
    let Some(line) = stdout
        .lines()
        .find(|l| l.starts_with(r#"{"type": "map", "data": {"@c": "#))
    else {
        return Ok(Vec::new());
    };
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| format!("bad JSON {line}: {e}"))?;
    let keys = object_keys(line, r#"{"@c": "#);
    let mut seen = std::collections::HashSet::new();
    for k in &keys {
        if !seen.insert(k) {
            return Err(format!("duplicate JSON object key {k:?} in {line}"));
        }
    }
    let map = value["data"]["@c"]
        .as_object()
        .ok_or(format!("no @c object in {line}"))?;
    Ok(map
        .iter()
        .map(|(k, v)| format!("@c[{}]: {v}", k.replace(',', ", ")))
        .collect())
}

/// The keys of the JSON object that starts right after `prefix` in `line`,
/// in written order, repeats included (a parser into a map would hide them).
fn object_keys(line: &str, prefix: &str) -> Vec<String> {
    let Some(start) = line.find(prefix) else {
        return Vec::new();
    };
    let bytes = line.as_bytes();
    let mut i = start + prefix.len() + 1; // past the object's `{`
    let mut depth = 1;
    let mut keys = Vec::new();
    while i < bytes.len() && depth > 0 {
        match bytes[i] {
            b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                let after = line[j + 1..].trim_start();
                if depth == 1 && after.starts_with(':') {
                    keys.push(line[i + 1..j].to_string());
                }
                i = j + 1;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    keys
}
