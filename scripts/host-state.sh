#!/usr/bin/env bash
# Records what a test run must leave as it found it, and checks it was.
#
#   scripts/host-state.sh snapshot DIR [PART...]
#   scripts/host-state.sh compare DIR [PART...]
#
# PARTs (all by default):
#   mounts   this mount namespace's table (mount point, root, type, source)
#   trace    tracefs state: set_event (the enabled events), kprobe_events,
#            uprobe_events, dynamic_events, current_tracer, tracing_on,
#            instances; read through a tracefs mounted in a private mount
#            namespace, so reading mounts nothing here
#   bpf      BPF programs, maps and links (bpftool); after the run, a new one
#            that no process holds (by a descriptor, or through a held link or
#            program) is left in the kernel
#   cgroups  directories of the cgroup v2 hierarchy (found in mountinfo)
#   files    where tests write outside temporary directories: /sys/fs/bpf
#            (pins) and /var/tmp/weft-* (O_DIRECT files need a disk)
#
# `compare` takes a new snapshot and exits 1 naming each difference: a mount
# added or gone, trace state changed, a BPF object left, a cgroup or file
# added (ones gone are not the run's doing). What settles late (processes
# exiting, the kernel freeing objects) is given 15 seconds.
set -euo pipefail

usage() {
    echo "usage: $0 snapshot|compare DIR [mounts|trace|bpf|cgroups|files ...]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
action=$1
dir=$2
shift 2
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(mounts trace bpf cgroups files)

snap_mounts() {
    # mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SOURCE SUPEROPTS
    awk '{ for (i = 7; $i != "-"; i++); print $5, $4, $(i + 1), $(i + 2) }' /proc/self/mountinfo | sort
}

snap_trace() {
    # Already tracefs in this namespace, or mounted in the private one.
    unshare -m --propagation private sh -c '
        mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing || exit 1
        cd /sys/kernel/tracing
        for f in set_event kprobe_events uprobe_events dynamic_events current_tracer tracing_on; do
            [ -e "$f" ] || continue
            sed "s|^|$f: |" "$f"
        done
        ls instances | sed "s|^|instance: |"
    '
}

# One line per object: KIND ID NAME and what it holds (progs: maps; links: prog).
snap_bpf_objects() {
    {
        bpftool -j prog show | jq -r '.[] | "prog \(.id) \(.type):\(.name // "-") maps=\((.map_ids // []) | join(","))"'
        bpftool -j map show | jq -r '.[] | "map \(.id) \(.type):\(.name // "-")"'
        bpftool -j link show | jq -r '.[] | "link \(.id) \(.type) prog=\(.prog_id // "")"'
    } | sort -k1,1 -k2,2n
}

# The ids of BPF objects some process holds a descriptor of: KIND ID.
snap_bpf_held() {
    # A file per descriptor; processes come and go while we read (-s).
    grep -shE '^(prog|map|link)_id:' /proc/[0-9]*/fdinfo/* |
        sed -E 's/^(prog|map|link)_id:[[:space:]]*([0-9]+).*/\1 \2/' | sort -u || true
}

cgroup2_root() {
    awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) == "cgroup2") { print $5; exit } }' /proc/self/mountinfo
}

snap_cgroups() {
    local root
    root=$(cgroup2_root)
    [ -n "$root" ] || { echo "(no cgroup2 mount)"; return; }
    find "$root" -type d 2>/dev/null | sort
}

snap_files() {
    { [ -d /sys/fs/bpf ] && find /sys/fs/bpf -mindepth 1; find /var/tmp -maxdepth 1 -name 'weft*'; } 2>/dev/null | sort
}

snapshot_to() {
    local out=$1 part
    mkdir -p "$out"
    for part in "${parts[@]}"; do
        case $part in
            mounts) snap_mounts >"$out/mounts" ;;
            trace) snap_trace >"$out/trace" ;;
            bpf) snap_bpf_objects >"$out/bpf" ;;
            cgroups) snap_cgroups >"$out/cgroups" ;;
            files) snap_files >"$out/files" ;;
            *) usage ;;
        esac
    done
}

# Prints the differences of one part between $dir and $after.
differences() {
    local part=$1 before=$dir/$1 now=$after/$1
    [ -f "$before" ] || { echo "$part: no snapshot in $dir (run snapshot first)"; return; }
    case $part in
        mounts)
            comm -13 "$before" "$now" | sed 's/^/mount added: /'
            comm -23 "$before" "$now" | sed 's/^/mount gone: /'
            ;;
        trace)
            comm -13 <(sort "$before") <(sort "$now") | sed 's/^/tracefs now has: /'
            comm -23 <(sort "$before") <(sort "$now") | sed 's/^/tracefs no longer has: /'
            ;;
        bpf)
            # Objects whose ids were not there before, that nothing holds:
            # not a descriptor, nor a held link's program, nor a held
            # program's map.
            snap_bpf_held >"$after/bpf-held"
            awk '
                FILENAME == ARGV[1] { before[$1 " " $2] = 1; next }
                FILENAME == ARGV[2] { held[$1 " " $2] = 1; next }
                { line[$1 " " $2] = $0; kind[$1 " " $2] = $1
                  if ($1 == "link") { split($4, p, "="); linkprog[$1 " " $2] = p[2] }
                  if ($1 == "prog") { split($4, m, "="); progmaps[$1 " " $2] = m[2] } }
                END {
                    for (k in linkprog) if (k in held && linkprog[k] != "") held["prog " linkprog[k]] = 1
                    for (k in progmaps) if (k in held) {
                        n = split(progmaps[k], ids, ",")
                        for (i = 1; i <= n; i++) held["map " ids[i]] = 1
                    }
                    for (k in line) if (!(k in before) && !(k in held)) print "BPF object left: " line[k]
                }' "$before" "$after/bpf-held" "$now" | sort
            ;;
        cgroups) comm -13 "$before" "$now" | sed 's/^/cgroup added: /' ;;
        files) comm -13 "$before" "$now" | sed 's/^/file added: /' ;;
    esac
}

case $action in
    snapshot)
        rm -rf "$dir"
        snapshot_to "$dir"
        ;;
    compare)
        after="$dir.after"
        deadline=$((SECONDS + 15))
        while :; do
            rm -rf "$after"
            snapshot_to "$after"
            found=""
            for part in "${parts[@]}"; do
                found+=$(differences "$part")
            done
            [ -n "$found" ] || { echo "host state: as found (${parts[*]})"; exit 0; }
            [ $SECONDS -lt $deadline ] || break
            sleep 1
        done
        echo "host state: CHANGED by the run (${parts[*]}; $dir against $after):" >&2
        for part in "${parts[@]}"; do
            differences "$part" | sed 's/^/  /' >&2
        done
        exit 1
        ;;
    *) usage ;;
esac
