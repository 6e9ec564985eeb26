//! Kernel tests of user-space probes: uprobe, uretprobe and usdt on a C
//! target (`fixtures/uprobe_target.c`, comm `weftut`) compiled once per test
//! process as PIE, non-PIE and -O0 (memory operands in its USDT specs).
//! `uprobe_target N K [SLEEP_MS]` calls marker(1..N), answer(1..K) (returns
//! 2i), offsets(1..K) (instructions at +0, +3 and +9), getenv() N times, fires weft:tick(i, "label") N times and, while its
//! semaphore is raised, weft:guarded(i) N times. Counts match bpftrace 0.17.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use common::{run_weft, scratch};

struct Targets {
    pie: String,
    no_pie: String,
    o0: String,
}

fn targets() -> &'static Targets {
    static T: OnceLock<Targets> = OnceLock::new();
    T.get_or_init(|| {
        let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/uprobe_target.c");
        let build = |name: &str, extra: &[&str]| {
            let out = scratch(name).display().to_string();
            let status = Command::new("cc")
                .args([
                    "-g",
                    "-fno-omit-frame-pointer",
                    "-mno-omit-leaf-frame-pointer",
                ])
                .args(extra)
                .arg("-o")
                .arg(&out)
                .arg(&src)
                .status()
                .expect("run cc (the C compiler; scripts/setup.sh installs it)");
            assert!(
                status.success(),
                "compiling {} failed (needs systemtap-sdt-dev)",
                src.display()
            );
            out
        };
        Targets {
            pie: build("ut-pie", &["-O1", "-fpie", "-pie"]),
            no_pie: build("ut-nopie", &["-O1", "-fno-pie", "-no-pie"]),
            o0: build("ut-o0", &["-O0"]),
        }
    })
}

/// `weft -q -c 'BIN ARGS' -e SCRIPT`, expecting success; returns stdout.
fn trace(bin: &str, args: &str, script: &str) -> String {
    let cmd = format!("{bin} {args}");
    let out = run_weft(&["-q", "-c", &cmd, "-e", script], Duration::from_secs(60));
    common::assert_succeeded(&out);
    out.stdout
}

/// The map lines of weft's output, sorted (bpftrace prints maps by name).
fn lines(out: &str) -> Vec<&str> {
    out.lines().filter(|l| !l.is_empty()).collect()
}

#[test]
fn uprobe_arg0_sum_and_count_pie_and_non_pie() {
    require_root!();
    let t = targets();
    for bin in [&t.pie, &t.no_pie] {
        let script =
            format!("uprobe:{bin}:marker /pid == cpid/ {{ @s = sum(arg0); @c = count(); }}");
        assert_eq!(
            lines(&trace(bin, "100 3", &script)),
            ["@c: 100", "@s: 5050"],
            "{bin}"
        );
    }
}

/// Issue 14, bug 9: probes on one function run in the script's order (the
/// kernel runs a uprobe's consumers newest first), entries and returns alike.
#[test]
fn probes_on_one_function_run_in_script_order() {
    require_root!();
    let bin = &targets().pie;
    let script = format!(
        r#"uprobe:{bin}:marker /pid == cpid/ {{ printf("first "); }}
        uprobe:{bin}:marker /pid == cpid/ {{ printf("second "); }}
        uprobe:{bin}:marker /pid == cpid/ {{ printf("third\n"); }}
        uretprobe:{bin}:marker /pid == cpid/ {{ printf("ret1 "); }}
        uretprobe:{bin}:marker /pid == cpid/ {{ printf("ret2\n"); }}"#
    );
    let out = trace(bin, "2 3", &script);
    assert_eq!(
        out, "first second third\nret1 ret2\nfirst second third\nret1 ret2\n\n\n",
        "{out}"
    );
}

#[test]
fn uretprobe_retval() {
    require_root!();
    let t = targets();
    for bin in [&t.pie, &t.no_pie] {
        let script =
            format!("uretprobe:{bin}:answer /pid == cpid/ {{ @r = sum(retval); @n = count(); }}");
        // answer(i) = 2i for i = 1..7.
        assert_eq!(
            lines(&trace(bin, "10 7", &script)),
            ["@n: 7", "@r: 56"],
            "{bin}"
        );
    }
}

#[test]
fn usdt_integer_and_string_arguments() {
    require_root!();
    let t = targets();
    // -O1 gives register operands (-4@%r12d 8@%r13), -O0 memory ones (-4@-24(%rbp)).
    for bin in [&t.pie, &t.no_pie, &t.o0] {
        let script = format!(
            "usdt:{bin}:weft:tick /pid == cpid/ {{ @s = sum(arg0); @l[str(arg1)] = count(); }}"
        );
        assert_eq!(
            lines(&trace(bin, "20 1", &script)),
            ["@l[label]: 20", "@s: 210"],
            "{bin}"
        );
    }
}

#[test]
fn usdt_semaphore_is_raised_while_attached() {
    require_root!();
    let t = targets();
    // weft:guarded fires only when the target sees its semaphore raised.
    let script = format!(
        "usdt:{}:guarded /pid == cpid/ {{ @g = count(); @s = sum(arg0); }}",
        t.pie
    );
    assert_eq!(
        lines(&trace(&t.pie, "30 1", &script)),
        ["@g: 30", "@s: 465"]
    );
}

#[test]
fn latency_histogram_keyed_by_tid() {
    require_root!();
    let bin = &targets().pie;
    let script = format!(
        "uprobe:{bin}:answer /pid == cpid/ {{ @start[tid] = nsecs; }}
         uretprobe:{bin}:answer /pid == cpid && @start[tid]/ {{ @lat = hist(nsecs - @start[tid]); @n = count(); delete(@start[tid]); }}"
    );
    let out = trace(bin, "1 40", &script);
    assert!(out.contains("@n: 40\n"), "{out}");
    let total: u64 = out
        .lines()
        .filter(|l| l.starts_with('['))
        .filter_map(|l| {
            l.split_once(')')?
                .1
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert_eq!(total, 40, "{out}");
}

#[test]
fn shared_library_by_short_name() {
    require_root!();
    let bin = &targets().pie;
    let out = trace(
        bin,
        "25 1",
        "uprobe:libc:getenv /pid == cpid/ { @c = count(); }",
    );
    assert_eq!(lines(&out), ["@c: 25"]);
}

#[test]
fn wildcard_over_symbols_with_func() {
    require_root!();
    let bin = &targets().no_pie;
    let script = format!("uprobe:{bin}:*er /pid == cpid/ {{ @[func] = count(); }}");
    assert_eq!(
        lines(&trace(bin, "12 5", &script)),
        ["@[answer]: 5", "@[marker]: 12"]
    );
}

#[test]
fn pid_attaches_to_a_running_process() {
    require_root!();
    let bin = &targets().pie;
    // The target sleeps 1.5 s before its calls; weft attaches to it meanwhile
    // and ends when it exits. Its library is found among the process's mappings.
    let mut child = Command::new(bin)
        .args(["40", "1", "1500"])
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn target");
    let pid = child.id().to_string();
    let script = format!(
        "uprobe:{bin}:marker {{ @c = count(); @s = sum(arg0); }} uprobe:libc:getenv {{ @g[comm] = count(); }}"
    );
    let out = run_weft(&["-q", "-p", &pid, "-e", &script], Duration::from_secs(30));
    let _ = common::wait_with_timeout(&mut child, Duration::from_secs(10));
    assert!(
        !out.timed_out && out.status == Some(0),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert_eq!(lines(&out.stdout), ["@c: 40", "@g[weftut]: 40", "@s: 820"]);
}

#[test]
fn unknown_binary_or_symbol_is_one_clear_error() {
    let bin = &targets().pie;
    for (script, code, text) in [
        (
            "uprobe:/no/such/binary:main { }".to_string(),
            "E0440",
            "cannot find the binary",
        ),
        (
            format!("uprobe:{bin}:markr {{ }}"),
            "E0442",
            "did you mean `marker`?",
        ),
        (
            format!("usdt:{bin}:weft:tock {{ }}"),
            "E0444",
            "no USDT probe `weft:tock`",
        ),
    ] {
        assert_one_error(&script, code, text);
    }
}

#[test]
fn lists_functions_and_usdt_probes() {
    let bin = &targets().pie;
    let out = run_weft(
        &["-l", &format!("uprobe:{bin}:*er")],
        Duration::from_secs(20),
    );
    assert_eq!(
        lines(&out.stdout),
        [
            format!("uprobe:{bin}:answer"),
            format!("uprobe:{bin}:marker")
        ]
    );
    let out = run_weft(&["-lv", &format!("usdt:{bin}:*")], Duration::from_secs(20));
    let expected = format!(
        "usdt:{bin}:weft:guarded\n    1 argument(s)\n    int32 arg0\nusdt:{bin}:weft:tick\n    2 argument(s)\n    int32 arg0\n    uint64 arg1\n"
    );
    assert_eq!(out.stdout, expected);
}

/// User stacks of the `-c` command resolve although it exited before the
/// maps print: its memory map is kept as it exits.
/// bpftrace 0.17 prints hex here (the process is gone at print time); while
/// the process lives it prints the same frames: the probe at marker's entry
/// and, as the frame-pointer walk starts from main's frame, main's caller.
#[test]
fn ustack_of_an_exited_command_keeps_its_symbols() {
    require_root!();
    let t = targets();
    for bin in [&t.pie, &t.no_pie] {
        let script = format!(
            "uprobe:{bin}:marker /pid == cpid/ {{ @[ustack] = count(); @p[ustack(perf)] = count(); }}"
        );
        let out = trace(bin, "7 1", &script);
        let got = lines(&out);
        assert_eq!(got.len(), 8, "{bin}\n{out}");
        assert_eq!(got[0], "@[", "{bin}\n{out}");
        assert_eq!(got[1], "        marker+0", "{bin}\n{out}");
        assert!(
            got[2].starts_with("        __libc_start_call_main+"),
            "{bin}\n{out}"
        );
        assert_eq!(got[3], "]: 7", "{bin}\n{out}");
        assert_eq!(got[4], "@p[", "{bin}\n{out}");
        assert!(
            got[5].ends_with(&format!(" marker+0 ({bin})")),
            "{bin}\n{out}"
        );
        assert!(got[6].contains(" __libc_start_call_main+"), "{bin}\n{out}");
        assert_eq!(got[7], "]: 7", "{bin}\n{out}");
    }
}

/// A printf'd `ustack` of a command that exits at once still resolves.
#[test]
fn printf_ustack_of_a_short_command_is_symbolized() {
    require_root!();
    let bin = &targets().pie;
    let script = format!("uprobe:{bin}:marker /pid == cpid/ {{ printf(\"%s\", ustack(1)); }}");
    let out = trace(bin, "3 1", &script);
    // Then the two blank lines bpftrace prints at exit.
    assert_eq!(out, "\n        marker+0\n".repeat(3) + "\n\n");
}

/// The address `nm` gives `symbol` in `bin`.
fn nm_address(bin: &str, symbol: &str) -> u64 {
    let out = common::run(Command::new("nm").arg(bin), Duration::from_secs(20));
    assert_eq!(out.status, Some(0), "nm {bin}: {}", out.stderr);
    out.stdout
        .lines()
        .find_map(|l| {
            let mut parts = l.split_whitespace();
            let (addr, _kind, name) = (parts.next()?, parts.next()?, parts.next()?);
            (name == symbol).then(|| u64::from_str_radix(addr, 16).ok())?
        })
        .unwrap_or_else(|| panic!("nm shows no {symbol} in {bin}"))
}

/// `uaddr("NAME")` is the symbol's address in the traced process: where a
/// non-PIE binary was linked (what `nm` shows), and in a PIE binary moved by
/// its load offset, as bpftrace's current release gives it. The oracles: at
/// marker's entry the CPU's instruction pointer is marker's address, and the
/// global `sink` read through `uaddr` holds what the target added to it
/// (1 + 2 + ... before marker(i) runs, that plus i when it returns).
/// `ctx` in a uprobe is the call's `struct pt_regs *`: its `di` holds
/// marker's argument.
#[test]
fn uaddr_is_the_address_of_a_symbol_in_the_process() {
    require_root!();
    let t = targets();
    for bin in [&t.pie, &t.no_pie] {
        let script = format!(
            "uprobe:{bin}:marker /pid == cpid/ {{ @ip[uaddr(\"marker\") == reg(\"ip\")] = count(); @entry = sum(*uaddr(\"sink\")); @di = sum(ctx.di); }} \
             uretprobe:{bin}:marker /pid == cpid/ {{ @exit = sum(*uaddr(\"sink\")); }}"
        );
        // Entry: 0 + 1 + 3 + 6; return: 1 + 3 + 6 + 10.
        assert_eq!(
            lines(&trace(bin, "4 1", &script)),
            ["@di: 10", "@entry: 10", "@exit: 20", "@ip[true]: 4"],
            "{bin}"
        );
    }
    let bin = &t.no_pie;
    let (marker, sink) = (nm_address(bin, "marker"), nm_address(bin, "sink"));
    let script = format!(
        "uprobe:{bin}:marker /pid == cpid/ {{ @a[uaddr(\"marker\"), uaddr(\"sink\")] = count(); }}"
    );
    assert_eq!(
        lines(&trace(bin, "3 1", &script)),
        [format!("@a[{marker:#x}, {sink:#x}]: 3")]
    );
}

/// `write_user()` (with `--unsafe`) writes over the traced process's
/// memory, and says whether it did: at marker(1)'s entry the global `sink`
/// is set to 1000, then marker adds its 1, which its return reads back.
#[test]
fn write_user_changes_the_traced_process() {
    require_root!();
    let bin = &targets().no_pie;
    let script = format!(
        "uprobe:{bin}:marker /pid == cpid/ {{ @written[write_user(uaddr(\"sink\"), (int64)1000, 8)] = count(); }} \
         uretprobe:{bin}:marker /pid == cpid/ {{ @after = max(*uaddr(\"sink\")); }}"
    );
    let cmd = format!("{bin} 1 1");
    let out = run_weft(
        &["--unsafe", "-q", "-c", &cmd, "-e", &script],
        Duration::from_secs(60),
    );
    // A kernel in lockdown (as this test machine's, built with
    // CONFIG_LOCK_DOWN_KERNEL_FORCE_INTEGRITY) offers no bpf_probe_write_user:
    // weft says so in one sentence instead of blaming its code.
    if out
        .stderr
        .contains("cannot use helper bpf_probe_write_user")
    {
        assert!(
            out.stderr.contains("a kernel locked down")
                && !out.stderr.contains("code generation bug"),
            "{}",
            out.stderr
        );
        testgate::only_if!(false, "a kernel outside lockdown (bpf_probe_write_user)");
    }
    common::assert_succeeded(&out);
    assert_eq!(
        lines(&out.stdout),
        ["@after: 1001", "@written[true]: 1"],
        "{}",
        out.stderr
    );
}

/// A file that is not ELF (raw code some loader maps and runs) is probed by
/// file offset with `--unsafe`; by name it is one sentence.
#[test]
fn a_flat_binary_is_probed_by_file_offset() {
    let dir = scratch("flat-binary");
    std::fs::create_dir_all(&dir).unwrap();
    let flat = dir.join("code.bin");
    std::fs::write(&flat, [0x90u8, 0x90, 0xc3]).unwrap();
    let flat = flat.display().to_string();
    let out = run_weft(
        &[
            "--unsafe",
            "-d",
            "bpf",
            "-e",
            &format!("uprobe:{flat}:0x1 {{ @ = count(); }}"),
        ],
        Duration::from_secs(20),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_one_error(
        &format!("uprobe:{flat}:main {{ @ = count(); }}"),
        "E0441",
        "name a place by its file offset",
    );
}

#[test]
fn uaddr_errors_are_one_clear_sentence() {
    let bin = &targets().pie;
    for (script, code, text) in [
        (
            "BEGIN { @ = uaddr(\"sink\"); }".to_string(),
            "E0470",
            "only valid in uprobe, uretprobe and usdt probes",
        ),
        (
            format!("uprobe:{bin}:marker {{ @ = uaddr(str(arg0)); }}"),
            "E0471",
            "expects a string literal",
        ),
        (
            format!("uprobe:{bin}:marker {{ @ = uaddr(\"sinc\"); }}"),
            "E0472",
            "did you mean `sink`?",
        ),
    ] {
        assert_one_error(&script, code, text);
    }
}

#[test]
fn an_indirect_function_is_probed_where_its_calls_land() {
    require_root!();
    // glibc's strlen is an IFUNC: its symbol is the resolver, run once at
    // load time; the probes must sit on the implementation this CPU uses.
    let script = r#"uprobe:libc:strlen /pid == cpid/ { @calls[str(arg0)] = count(); }
uretprobe:libc:strlen /pid == cpid && retval == 26/ { @returned = count(); }"#;
    let out = common::trace_workload(script, "strlen 25", &[]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines.contains(&"@calls[weft workload strlen probe]: 25"),
        "{}",
        out.stdout
    );
    assert!(lines.contains(&"@returned: 25"), "{}", out.stdout);
}

#[test]
fn a_stripped_binary_is_probed_through_its_debug_file() {
    require_root!();
    // A stripped copy of the target with its symbols in a separate file
    // beside it, named by .gnu_debuglink (as `objcopy` and distributions'
    // -dbg packages make them).
    let full = &targets().pie;
    let stripped = scratch("ut-stripped").display().to_string();
    let debug = scratch("ut-stripped.debug").display().to_string();
    let objcopy = |args: &[&str]| {
        let status = Command::new("objcopy")
            .args(args)
            .status()
            .expect("run objcopy (binutils)");
        assert!(status.success(), "objcopy {args:?}");
    };
    objcopy(&["--only-keep-debug", full, &debug]);
    objcopy(&[
        "--strip-all",
        &format!("--add-gnu-debuglink={debug}"),
        full,
        &stripped,
    ]);
    let script =
        format!("uprobe:{stripped}:local_step /pid == cpid/ {{ @ = count(); @s = sum(arg0); }}");
    let out = trace(&stripped, "4 6", &script);
    assert_eq!(lines(&out), ["@: 6", "@s: 21"], "{out}");
    // -l lists it too.
    let listed = run_weft(
        &["-l", &format!("uprobe:{stripped}:local_*")],
        Duration::from_secs(30),
    );
    assert_eq!(
        listed.stdout.trim(),
        format!("uprobe:{stripped}:local_step")
    );
    // Without its debug file the name is unknown, said clearly.
    std::fs::remove_file(&debug).unwrap();
    let out = run_weft(&["-e", &script], Duration::from_secs(30));
    assert_ne!(out.status, Some(0));
    assert!(
        out.stderr.contains("has no function `local_step`"),
        "{}",
        out.stderr
    );
    let _ = std::fs::remove_file(&stripped);
}

#[test]
fn no_uprobe_is_placed_on_a_vector_instruction() {
    require_root!();
    // Some kernels accept a uprobe on a VEX/EVEX instruction and then step
    // it wrongly (on the 6.18 test kernel, one on glibc's __strchr_evex made
    // printf, bash and cc fail in every process). weft refuses the place:
    // the exact name is an error, a wildcard goes on without it and warns,
    // and the next instruction can be probed.
    let bin = &targets().pie;
    let exact = run_weft(
        &["-e", &format!("uprobe:{bin}:vector_entry {{ }}")],
        Duration::from_secs(30),
    );
    assert_eq!(exact.status, Some(1), "{}", exact.stderr);
    assert!(
        exact
            .stderr
            .contains("weft places no uprobe on a vector (VEX/EVEX) instruction"),
        "{}",
        exact.stderr
    );
    // The advice names the next instruction exactly: a guessed offset inside
    // the instruction would be accepted and corrupt it.
    assert!(
        exact.stderr.ends_with(&format!(
            "; probe the next instruction, uprobe:{bin}:vector_entry+4, or a caller instead\n"
        )),
        "{}",
        exact.stderr
    );
    let wildcard = run_weft(
        &[
            "-e",
            &format!(
                "uprobe:{bin}:vector_entry* {{ }} uprobe:{bin}:marker {{ }} interval:ms:100 {{ exit(); }}"
            ),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(wildcard.status, Some(0), "{}", wildcard.stderr);
    let warnings: Vec<&str> = wildcard
        .stderr
        .lines()
        .filter(|l| l.starts_with("WARNING: "))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", wildcard.stderr);
    for w in &warnings {
        assert!(
            w.contains("vector (VEX/EVEX) instruction")
                && w.ends_with("left out of the wildcard's probes"),
            "{w}"
        );
    }
    // vpxor %xmm0,%xmm0,%xmm0 is 4 bytes: the `ret` after it takes a probe.
    let next = run_weft(
        &[
            "-e",
            &format!("uprobe:{bin}:vector_entry+4 {{ }} interval:ms:100 {{ exit(); }}"),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(next.status, Some(0), "{}", next.stderr);
}

/// FUNCTION+OFFSET and an address are placed only where an instruction
/// begins: offsets() has `mov` at +0 (3 bytes), `add $imm32` at +3 (6
/// bytes) and `ret` at +9. On a boundary the probe counts each call; inside
/// an instruction weft refuses before attaching (the target runs unharmed).
#[test]
fn offset_probes_go_only_where_an_instruction_begins() {
    require_root!();
    let t = targets();
    for bin in [&t.pie, &t.no_pie] {
        let entry = nm_address(bin, "offsets");
        let script = format!(
            "uprobe:{bin}:offsets+3 /pid == cpid/ {{ @add = count(); }} \
             uprobe:{bin}:offsets+9 /pid == cpid/ {{ @ret = count(); @sum = sum(reg(\"ax\")); }} \
             uprobe:{bin}:{:#x} /pid == cpid/ {{ @at = count(); }}",
            entry + 3
        );
        // 6 calls of offsets(i) return i + 0x12345678: 21 + 6 * 305419896.
        assert_eq!(
            lines(&trace(bin, "2 6", &script)),
            ["@add: 6", "@at: 6", "@ret: 6", "@sum: 1832519397"],
            "{bin}"
        );
        for (inside, place) in [
            ("offsets+4".to_string(), "offsets+4"),
            (format!("{:#x}", entry + 8), "offsets+8"),
        ] {
            let out = run_weft(
                &[
                    "-c",
                    &format!("{bin} 2 6"),
                    "-e",
                    &format!("uprobe:{bin}:{inside} {{ }}"),
                ],
                Duration::from_secs(30),
            );
            assert_eq!(out.status, Some(1), "{inside}: {}", out.stderr);
            assert!(out.stderr.contains("CODE: E0455"), "{}", out.stderr);
            assert!(
                out.stderr
                    .contains(&format!("{place}) is inside an instruction"))
                    || out
                        .stderr
                        .contains(&format!("{place} is inside an instruction")),
                "{}",
                out.stderr
            );
            assert!(
                out.stderr.contains("the nearest instructions begin at")
                    && out.stderr.contains("offsets+3")
                    && out.stderr.contains("offsets+9"),
                "{}",
                out.stderr
            );
            assert!(out.stdout.is_empty(), "{}", out.stdout);
        }
    }
}

/// Without root: weft refuses an offset inside one of libc's instructions
/// (printf begins with the 7-byte `sub $0xd8,%rsp`), names the nearest
/// boundaries, and with `--unsafe` compiles it with a warning instead.
/// Only compiled (`--emit-elf`): were the check ever lost, nothing would be
/// attached to the machine's libc.
#[test]
fn an_offset_inside_an_instruction_needs_unsafe() {
    let inside = "uprobe:libc:printf+3 { }";
    let elf = common::scratch("unsafe-printf.o");
    let elf = elf.display().to_string();
    let out = run_weft(&["--emit-elf", &elf, "-e", inside], Duration::from_secs(30));
    assert_eq!(out.status, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("ERROR: printf+3 is inside an instruction")
            && out
                .stderr
                .contains("the nearest instructions begin at printf+0 and printf+7")
            && out.stderr.contains("--unsafe places the probe anyway"),
        "{}",
        out.stderr
    );
    let out = run_weft(
        &["--unsafe", "--emit-elf", &elf, "-e", inside],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("WARNING: printf+3 is inside an instruction")
            && out.stderr.contains("placed anyway (--unsafe)"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("error"), "{}", out.stderr);
    let _ = std::fs::remove_file(&elf);
    // issue 14: an address in no function is refused, not attached blindly.
    let out = run_weft(
        &["--emit-elf", &elf, "-e", "uprobe:/bin/bash:10 { }"],
        Duration::from_secs(30),
    );
    assert_eq!(out.status, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("ERROR: Could not resolve address: /bin/bash:0xa\n"),
        "{}",
        out.stderr
    );
}

/// A probe that fails to attach ends the run before BEGIN's output, with
/// the error and a non-zero exit, and no maps.
#[test]
fn an_attach_failure_comes_before_begin() {
    require_root!();
    let bin = &targets().pie;
    for begin in ["printf(\"begin\\n\");", "printf(\"begin\\n\"); exit();"] {
        let script = format!("uprobe:{bin}:vector_entry {{ @ = count(); }} BEGIN {{ {begin} }}");
        let out = run_weft(&["-e", &script], Duration::from_secs(30));
        assert_eq!(out.status, Some(1), "{script}\n{}", out.stderr);
        assert_eq!(out.stdout, "", "{script}");
        assert!(!out.stderr.contains("Attached"), "{}", out.stderr);
        assert!(
            out.stderr.contains("weft places no uprobe on a vector"),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn reg_reads_the_probed_tasks_registers() {
    require_root!();
    let t = targets();
    // At marker's entry, %rdi holds its argument and %rip its address (the
    // non-PIE build runs where it is linked).
    let script = format!(
        "uprobe:{0}:marker /pid == cpid/ {{ @di[reg(\"di\") == arg0] = count(); @ip[reg(\"ip\") == uaddr(\"marker\")] = count(); @sum = sum(reg(\"di\")); }}",
        t.no_pie
    );
    let out = trace(&t.no_pie, "5 2", &script);
    assert_eq!(
        lines(&out),
        ["@di[true]: 5", "@ip[true]: 5", "@sum: 15"],
        "{out}"
    );
}

/// weft rejects `script` with exactly one error, of `code`, saying `text`.
fn assert_one_error(script: &str, code: &str, text: &str) {
    let out = run_weft(&["-e", script], Duration::from_secs(20));
    assert_eq!(out.status, Some(1), "{script}\n{}", out.stderr);
    assert!(
        out.stderr.contains(code) && out.stderr.contains(text),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.matches("ERROR: ").count(), 1, "{}", out.stderr);
}
