#!/usr/bin/env bash
# Installs what building and testing weft needs on Debian/Ubuntu; safe to run again.
set -euo pipefail
need=()
for pkg in pkg-config libelf-dev zlib1g-dev make gcc libc6-dev systemtap-sdt-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# Tools the tests use: bpftool and llvm-objdump read our ELF objects; bpftrace
# ships the tools (/usr/sbin/*.bt) the kernel tests run, and is the reference;
# golang-go: `go tool pprof` reads the profiles `weft profile -o x.pb.gz` writes;
# python3 is the HTTP server and client the TCP stream examples are tested on;
# openssl is sslsnoop.bt's TLS server and client; binutils (objdump) and
# libc6-dbg (names of glibc's strlen/memcpy implementations): the x86 decoder
# that places uprobes is checked against them; linux-perf (`perf record
# --call-graph dwarf`) and gcc are the oracle and the compiler of the DWARF
# unwinding tests (crates/cli/tests/unwind.rs).
for pkg in bpftool llvm bpftrace golang-go python3 openssl binutils libc6-dbg linux-perf gcc; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
# Prometheus (its server and promtool) scrapes weft in the --prometheus test;
# its recommended exporters are not needed.
if ! dpkg -s prometheus >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
# The --otlp tests decode what weft sends with the official OpenTelemetry
# protobuf definitions (PyPI's opentelemetry-proto), kept in a venv under
# target/ that the tests find.
venv="$(cd "$(dirname "$0")/.." && pwd)/target/otlp-venv"
if ! "$venv/bin/python" -c 'import opentelemetry.proto.collector.trace.v1.trace_service_pb2' >/dev/null 2>&1; then
    if ! python3 -m venv --help >/dev/null 2>&1; then
        SUDO=""
        [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
    fi
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check opentelemetry-proto
fi
command -v cargo >/dev/null || { echo "setup: cargo is missing: install Rust (rustup) first" >&2; exit 1; }
