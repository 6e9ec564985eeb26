#!/bin/sh
# Regenerates the golden outputs with the real bpftrace 0.17 (needs root).
# For each NAME.bt: NAME.txt is `bpftrace NAME.bt` and NAME.json is
# `bpftrace -f json NAME.bt` (stdout only; stderr carries warnings).
#
# Two tests read them: crates/output/tests/golden.rs replays what some of
# the scripts did through weft's sinks, and crates/cli/tests/golden.rs runs
# weft on every script (except those whose first line says `replay only`)
# and compares its output with bpftrace's, byte for byte. A script must
# print the same on every run: no times, pids or kernel addresses, and no
# two entries of a map sorted by value with equal values (bpftrace prints
# those in hash order, which changes from run to run).
set -e
cd "$(dirname "$0")"
for script in *.bt; do
    name=${script%.bt}
    timeout 10 bpftrace "$script" > "$name.txt" 2>/dev/null
    timeout 10 bpftrace -f json "$script" > "$name.json" 2>/dev/null
done
