//! weft's x86-64 decoder (`uelf::decode`, which decides where a uprobe may
//! go) against objdump on real code: every instruction boundary of libc's
//! `.text` and of the workload's, and glibc's strlen, memcpy and printf
//! implementations one by one (named by libc6-dbg's symbols), each decoded
//! exactly to its end. Needs objdump (binutils), not root.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

const LIBC: &str = "/lib/x86_64-linux-gnu/libc.so.6";

fn have_objdump() -> bool {
    Command::new("objdump")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// What objdump decodes in a range of a file's `.text`.
struct Objdump {
    /// Where it starts decoding afresh: each symbol (and the range's start).
    starts: BTreeSet<u64>,
    /// Where each instruction begins.
    boundaries: BTreeSet<u64>,
    /// The line of each instruction, for failure messages.
    lines: std::collections::BTreeMap<u64, String>,
}

/// `objdump -d` of `.text` (of `[start, stop)` when given), parsed.
fn objdump(path: &str, range: Option<(u64, u64)>) -> Objdump {
    let mut cmd = Command::new("objdump");
    cmd.args(["-d", "-z", "--insn-width=16", "--section=.text"]);
    if let Some((start, stop)) = range {
        cmd.arg(format!("--start-address={start:#x}"))
            .arg(format!("--stop-address={stop:#x}"));
    }
    let out = cmd.arg(path).output().expect("run objdump");
    assert!(out.status.success(), "objdump {path} failed");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parsed = Objdump {
        starts: range.map(|(start, _)| start).into_iter().collect(),
        boundaries: BTreeSet::new(),
        lines: Default::default(),
    };
    for line in text.lines() {
        // `0000000000026380 <name>:` begins a symbol.
        if let Some((address, rest)) = line.split_once(" <")
            && rest.ends_with(">:")
            && let Ok(address) = u64::from_str_radix(address, 16)
        {
            parsed.starts.insert(address);
            continue;
        }
        // `   26384:\tf3 0f 1e fa    \tendbr64`
        let mut fields = line.split('\t');
        let (Some(address), Some(raw)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some(Ok(address)) = address
            .trim()
            .strip_suffix(':')
            .map(|a| u64::from_str_radix(a, 16))
        else {
            continue;
        };
        parsed.boundaries.insert(address);
        // objdump shows `fwait` and the x87 instruction after it as one
        // (`9b d9 7d fe  fstcw`); the CPU runs two.
        if raw.split_whitespace().count() > 1 && raw.starts_with("9b ") {
            parsed.boundaries.insert(address + 1);
        }
        parsed.lines.insert(address, line.to_string());
    }
    parsed
}

/// The instruction boundaries weft decodes from `start` up to `stop` (the
/// last may run past it), or where decoding failed.
fn decode_range(
    binary: &uelf::Binary,
    file: &[u8],
    start: u64,
    stop: u64,
) -> (BTreeSet<u64>, Option<(u64, uelf::DecodeError)>) {
    let offset = binary.file_offset(start).expect("code is in the file") as usize;
    let code = &file[offset..(offset + (stop - start) as usize + 15).min(file.len())];
    let mut boundaries = BTreeSet::new();
    let mut at = 0usize;
    while start + (at as u64) < stop {
        boundaries.insert(start + at as u64);
        match uelf::decode(&code[at..]) {
            Ok(i) => at += i.len,
            Err(e) => return (boundaries, Some((start + at as u64, e))),
        }
    }
    (boundaries, None)
}

/// Compares weft's boundaries with objdump's over `[start, stop)` of the
/// file's `.text` (all of it when `None`), each stretch between two of
/// objdump's symbols decoded from its start, as objdump does; returns the
/// number of instructions compared.
fn compare(path: &str, range: Option<(u64, u64)>) -> usize {
    let file = std::fs::read(path).unwrap();
    let binary = uelf::Binary::parse(&file).unwrap();
    let dump = objdump(path, range);
    let (first, last) = match range {
        Some(r) => r,
        None => {
            let last = *dump.boundaries.last().expect("objdump decoded something");
            let raw = dump.lines[&last].split('\t').nth(1).unwrap_or("");
            (0, last + raw.split_whitespace().count() as u64)
        }
    };
    let mut starts: Vec<u64> = dump
        .starts
        .iter()
        .copied()
        .filter(|&a| a >= first && a < last)
        .collect();
    starts.push(last);
    let mut mismatches = Vec::new();
    let mut compared = 0;
    for pair in starts.windows(2) {
        let (start, stop) = (pair[0], pair[1]);
        let theirs: BTreeSet<u64> = dump.boundaries.range(start..stop).copied().collect();
        let (ours, failed) = decode_range(&binary, &file, start, stop);
        compared += theirs.len();
        if let Some((at, error)) = failed {
            mismatches.push(format!(
                "{path}: weft cannot decode at {at:#x} ({error}); objdump: {}",
                dump.lines.get(&at).map_or("-", String::as_str)
            ));
        } else if let Some(&at) = theirs.symmetric_difference(&ours).next() {
            let near = dump
                .lines
                .range(..=at)
                .next_back()
                .map_or("-", |(_, l)| l.as_str());
            let whose = if theirs.contains(&at) {
                "objdump's only"
            } else {
                "weft's only"
            };
            mismatches.push(format!(
                "{path}: boundaries differ first at {at:#x} ({whose}); objdump's instruction there: {near}"
            ));
        }
        if mismatches.len() > 20 {
            break;
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    compared
}

#[test]
fn all_of_libcs_text_decodes_as_objdump_decodes_it() {
    testgate::require!(
        have_objdump(),
        "objdump (binutils; scripts/setup.sh installs it)"
    );
    let compared = compare(LIBC, None);
    eprintln!("{compared} instructions of {LIBC} compared");
    assert!(compared > 100_000, "{compared}");
}

#[test]
fn the_workloads_text_decodes_as_objdump_decodes_it() {
    testgate::require!(
        have_objdump(),
        "objdump (binutils; scripts/setup.sh installs it)"
    );
    let workload = common::workload();
    let compared = compare(&workload.display().to_string(), None);
    eprintln!("{compared} instructions of the workload compared");
    assert!(compared > 10_000, "{compared}");
}

/// glibc's strlen and memcpy are indirect functions with an implementation
/// per CPU feature (SSE2, AVX2, EVEX, AVX-512, ERMS): each is decoded from
/// its entry and must end exactly at its end, with objdump's boundaries.
#[test]
fn glibcs_strlen_memcpy_and_printf_implementations() {
    testgate::require!(
        have_objdump(),
        "objdump (binutils; scripts/setup.sh installs it)"
    );
    let file = std::fs::read(LIBC).unwrap();
    let mut binary = uelf::Binary::parse(&file).unwrap();
    let debug = binary
        .debug_file_paths(LIBC)
        .into_iter()
        .find_map(|p| std::fs::read(p).ok());
    testgate::require!(
        debug.is_some(),
        "libc's debug symbols (libc6-dbg; scripts/setup.sh installs it)"
    );
    let debug = uelf::Binary::parse(&debug.unwrap()).unwrap();
    assert!(
        binary.add_debug_symbols(&debug),
        "libc6-dbg is for another libc"
    );
    let wanted = |name: &str| {
        name == "printf"
            || name == "__vfprintf_internal"
            || ["__strlen_", "__memcpy_", "__memmove_"]
                .iter()
                .any(|p| name.starts_with(p))
    };
    let functions: Vec<&uelf::Symbol> = binary
        .functions
        .iter()
        .filter(|s| wanted(&s.name) && s.size > 0 && !s.ifunc)
        .collect();
    let names: Vec<&str> = functions.iter().map(|s| s.name.as_str()).collect();
    for required in [
        "__strlen_avx2",
        "__strlen_evex",
        "__memmove_avx_unaligned_erms",
        "printf",
    ] {
        assert!(names.contains(&required), "{required} not in {names:?}");
    }
    let mut instructions = 0;
    for f in &functions {
        let offset = binary.file_offset(f.address).unwrap() as usize;
        let code = &file[offset..offset + f.size as usize];
        assert_eq!(
            uelf::place(code, f.size),
            uelf::Placement::Boundary,
            "{} does not decode to its end",
            f.name
        );
        instructions += compare(LIBC, Some((f.address, f.address + f.size)));
    }
    eprintln!(
        "{} functions, {instructions} instructions: {names:?}",
        functions.len()
    );
}
