#!/usr/bin/env bash
# Prints how many gated tests ran, were skipped or did not apply here, from
# the log the test gate (crates/testgate) appends to: one line per gate,
# `crate<TAB>test<TAB>status<TAB>reason`; a test's last line is its outcome.
set -euo pipefail
log="${1:-target/kernel-tests.log}"
if [ ! -s "$log" ]; then
    echo "kernel tests: none ran (no $log)"
    exit 0
fi
awk -F'\t' '
    { outcome[$1 "\t" $2] = $3; why[$1 "\t" $2] = $4 }
    END {
        for (t in outcome) {
            n[outcome[t]]++
            split(t, parts, "\t")
            if (outcome[t] == "ran") per[parts[1]]++
            else if (outcome[t] != "") notes = notes sprintf("  %s %s: %s (%s)\n", outcome[t], parts[1], parts[2], why[t])
        }
        crates = ""
        for (c in per) crates = crates (crates == "" ? "" : ", ") c " " per[c]
        printf "kernel tests: %d ran (%s), %d failed to run, %d skipped, %d not applicable here\n", n["ran"], crates, n["failed"], n["skipped"], n["not-applicable"]
        printf "%s", notes
    }' "$log"
