#!/bin/sh
# Regenerates bpftrace 0.17's outputs of the golden scripts (needs root and
# Debian's bpftrace 0.17) into bpftrace-0.17/: NAME.txt is `bpftrace NAME.bt`
# and NAME.json is `bpftrace -f json NAME.bt` (stdout only; stderr carries
# warnings).
#
# The expectations the tests compare weft with are NAME.txt and NAME.json
# in this directory: what bpftrace's current release prints. Where it prints
# as 0.17 did they are 0.17's bytes; where it does not, README.md lists each
# difference and where it comes from. After regenerating, `git diff
# bpftrace-0.17/` shows what 0.17 changed, to carry over by hand.
#
# A script must print the same on every run: no times, pids or kernel
# addresses, and no two entries of a map sorted by value with equal values
# (bpftrace prints those in hash order, which changes from run to run).
set -e
cd "$(dirname "$0")"
mkdir -p bpftrace-0.17
for script in *.bt; do
    name=${script%.bt}
    timeout 10 bpftrace "$script" > "bpftrace-0.17/$name.txt" 2>/dev/null
    timeout 10 bpftrace -f json "$script" > "bpftrace-0.17/$name.json" 2>/dev/null
done
