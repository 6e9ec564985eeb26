#!/usr/bin/env bash
# Sets up, builds weft in release mode and runs an example one-liner:
# counts a workload's system calls by number (it makes exactly 1000 getppid calls, number 110).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release -q -p weft -p workload
exec target/release/weft -c "target/release/weft-workload getppid 1000" \
    -e 'tracepoint:raw_syscalls:sys_enter /pid == cpid/ { @[args->id] = count(); }'
