#!/bin/sh
# Regenerates the golden outputs with the real bpftrace 0.17 (needs root).
# For each NAME.bt: NAME.txt is `bpftrace NAME.bt` and NAME.json is
# `bpftrace -f json NAME.bt` (stdout only; stderr carries warnings).
set -e
cd "$(dirname "$0")"
for script in *.bt; do
    name=${script%.bt}
    timeout 10 bpftrace "$script" > "$name.txt" 2>/dev/null
    timeout 10 bpftrace -f json "$script" > "$name.json" 2>/dev/null
done
