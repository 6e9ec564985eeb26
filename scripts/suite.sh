#!/bin/sh
# Runs bpftrace's runtime suite against a weft binary with the shared runner
# and writes the failing cases into docs/compat.md.
#
# Usage: scripts/suite.sh RUNNER SUITE_DIR WEFT [RESULTS.jsonl] [-- RUNNER_ARGS...]
#   RUNNER     the runner's run.py (tools/bpftrace-suite in the shared tree)
#   SUITE_DIR  where bpftrace's tests were exported and its test programs
#              built (tests/runtime, built/testprogs, built/testlibs)
#   WEFT       the weft binary (a release build: target/release/weft)
#
# The runner asks `--info` which features a tool has, in bpftrace's words;
# these are the ones weft has on a kernel like this one, so the cases that
# need them run instead of being skipped.
set -eu
runner=$1 suite=$2 weft=$3
results=${4:-/tmp/weft-suite.jsonl}
[ $# -ge 4 ] && shift 4 || shift $#
[ "${1:-}" = "--" ] && shift
python3 "$runner" --tests "$suite/tests/runtime" --tool weft --bin "$weft" \
    --testprogs "$suite/built/testprogs" --testlibs "$suite/built/testlibs" \
    --assume-feature btf --assume-feature uprobe_multi --assume-feature loop \
    --assume-feature get_func_ip --assume-feature libpath_resolv \
    --assume-feature lookup_percpu_elem --assume-feature iter --assume-feature dwarf \
    --results "$results" "$@" || true  # non-zero whenever a case fails
python3 "$(dirname "$0")/compat-failures.py" "$results"
