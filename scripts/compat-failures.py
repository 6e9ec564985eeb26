#!/usr/bin/env python3
"""Writes the list of bpftrace runtime-suite cases weft still fails into
docs/compat.md, between the markers below, from a `run.py --results FILE`
(one JSON line per case). Usage: scripts/compat-failures.py RESULTS.jsonl

Each case gets one line: its name and the reason the runner saw (weft's
diagnostic, or what differed)."""
import collections
import json
import re
import sys
from pathlib import Path

BEGIN = "<!-- suite-failures: begin (scripts/compat-failures.py) -->"
END = "<!-- suite-failures: end -->"

# Cases that test bpftrace's own identity, which the issue leaves outside the
# target: each expects the comm, process name, version or --info layout of a
# process called bpftrace.
IDENTITY = {
    "basic.it shows version": "expects bpftrace's version string",
    "basic.info flag": "expects bpftrace's --info layout",
    "btf.btf_char_array_to_string": "expects the comm `bpftrace`",
    "builtin.comm": "expects the comm `bpftrace`",
    "call.print_non_map_builtin": "expects the comm `bpftrace`",
    "json-output.print_non_map_builtin": "expects the comm `bpftrace`",
    "macro.builtin wrapper comm": "expects the comm `bpftrace`",
    "other.if_compare_and_print_string": "expects the comm `bpftrace`",
    "stdlib.comm from pid": "expects the comm `bpftrace`",
    "probe.signal_order": "signals `$(pidof bpftrace)`",
    "signals.custom signal handling probe": "signals `$(pidof bpftrace)`",
    "other.sigint under heavy load": "stops the tracer with `pkill -SIGINT bpftrace`",
    "json-output.complex": "expects the comm `bpftrace` as a map key",
    "call.iter:task": "expects a task with the comm `bpftrace` among those visited",
    "call.iter:task_file": "expects a task with the comm `bpftrace` among those visited",
    "call.iter:task_vma": "expects a task with the comm `bpftrace` among those visited",
}

# Cases whose failure has a cause outside weft, or comes from a difference
# weft chose (docs/compat.md's feature table says why), said in one line.
# The debugf cases read /sys/kernel/debug/tracing/trace; debugfs is not
# mounted on this machine (they pass with it mounted in a private mount
# namespace).
DEBUGFS = ("this machine: the case reads /sys/kernel/debug/tracing/trace and debugfs is not mounted "
           "(3 of 3 pass with it mounted)")
KALLSYMS = ("this kernel: no CONFIG_KALLSYMS_ALL, so /proc/kallsyms lists no per-CPU variable for the "
            "verifier to find; weft stops with one sentence (E0494)")

ENVIRONMENT = {
    "intcast.Sum casted retval": "different on purpose: nothing runs after exit() in weft (an in-kernel "
    "flag), so the 220 calls after the first are not counted; bpftrace counts until it detaches",
    "basic.defines work": "the runner's /bin/sh (dash) expands `\\n` in `echo` into a raw newline inside the "
    "string, which bpftrace 0.17 rejects too; under bash (bpftrace's CI) the script is valid",
    "call.debugf": DEBUGFS,
    "call.debugf_with_arguments": DEBUGFS,
    "call.debugf_with_seq_printf": DEBUGFS,
    "call.percpu_kaddr": KALLSYMS,
    "call.percpu_kaddr field access": KALLSYMS,
    "call.percpu_kaddr this cpu": KALLSYMS,
    "basic.non existent library include fails": "different on purpose: the expected text is clang's "
    "(`definitions.h:2:10: fatal error: ...`, about the file bpftrace hands clang); weft has no C compiler and "
    "fails as bpftrace does, in its own sentence naming the header and the directories searched (E0215)",
    "btf.redefine_btf_type_missing_def": "different on purpose: a struct the script's definition names but "
    "does not define (`struct thread_info`) is taken from the kernel's BTF, where bpftrace's clang sees only the "
    "script's text; the program is right (task_struct begins with thread_info on x86-64) and runs",
    "builtin.log size too small": "different on purpose: weft asks the verifier for its log only after a load "
    "fails, so a `log_size` too small for the log cannot fail a program the verifier accepts; it still sizes the "
    "log of a refused one",
    "macro.it accepts typeof expressions for nested casts": "different on purpose: `(uint8 *)-1` is the "
    "pointer C makes of -1, 0xffffffffffffffff, which weft prints; bpftrace's current release prints 0xff, the "
    "pointee's width",
    "other.named command line params aot": "different on purpose: `--aot` writes a precompiled bpftrace "
    "executable; weft compiles a script in milliseconds without LLVM, so the script itself is what is shipped",
    "probe.tracepoint_multiattach_missing": "different on purpose: without a `missing_probes` setting a missing "
    "attach point in a list is a warning, as in bpftrace 0.17, whose tools (installed by Debian's package) list "
    "names across kernel versions without a config block; bpftrace's current tools set `missing_probes` "
    "themselves, and `config = { missing_probes = \"error\" }` gives this case's error",
    "probe.uprobe_missing_probes": "different on purpose: without a `missing_probes` setting a missing attach "
    "point in a list is a warning, as in bpftrace 0.17 (see `probe.tracepoint_multiattach_missing`)",
    "call.printf_enum_symbolize_tracepoint": "this machine: the case's trigger, `ping`, is not installed; with "
    "a UDP packet to a closed local port instead, weft prints `3 SKB_DROP_REASON_NO_SOCKET`",
    "interop.interop return types": "imports bpftrace's `stdlib/test`, BPF C that bpftrace compiles with "
    "clang; weft has no C compiler and says so (its standard library is built in)",
}


def reason(row) -> str:
    if row["test"] in IDENTITY:
        return "bpftrace's identity: " + IDENTITY[row["test"]]
    if row["test"] in ENVIRONMENT:
        return ENVIRONMENT[row["test"]]
    detail = (row.get("detail") or "").strip().splitlines()
    text = detail[0] if detail else (row.get("category") or "failed")
    text = re.sub(r"\s+", " ", text).replace("|", "\\|")
    return text[:160]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    status = collections.Counter(r["status"] for r in rows)
    failed = sorted((r for r in rows if r["status"] == "FAIL"), key=lambda r: r["test"])
    runnable = status["PASS"] + status["FAIL"]
    identity = sum(1 for r in failed if r["test"] in IDENTITY)
    counted = runnable - identity
    lines = [
        BEGIN,
        "",
        f"Last full run: {status['PASS']} of {runnable} runnable cases pass "
        f"({100 * status['PASS'] / max(runnable, 1):.1f} %), {status['SKIP']} skip on this "
        f"kernel (kprobes, fentry, watchpoints, hardware events). Leaving out the {identity} "
        f"cases that test bpftrace's own identity, {status['PASS']} of {counted} pass "
        f"({100 * status['PASS'] / max(counted, 1):.1f} %). Counted by `scripts/suite.sh`, which "
        f"tells the runner the features weft has (bounded loops, per-CPU reads, iterators, DWARF, ...).",
        "",
        "| case | why it fails |",
        "|---|---|",
    ]
    lines += [f"| `{r['test']}` | {reason(r)} |" for r in failed]
    lines += ["", END]
    doc = Path(__file__).resolve().parent.parent / "docs" / "compat.md"
    text = doc.read_text() if doc.exists() else "# Compatibility with bpftrace\n"
    block = "\n".join(lines)
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## bpftrace's runtime suite: the cases that still fail\n\n" + block + "\n"
    doc.write_text(text)
    print(f"{len(failed)} failing cases written to {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
