#!/bin/sh
# Peak RSS and time of every gmem-analyze view and export on one gmem-synth
# trace, and the default report's rate by thread count.
#
#   bench/rss_bench.sh [EVENTS]            default 100000000 (100 M)
#
# ANALYZE=PATH and SYNTH=PATH: the binaries (default: build them in $BUILD,
# default build-bench). TRACE=PATH: the trace (written once if missing;
# default /tmp/gmem-rss-EVENTS.zst). THREADS="1 2 4": the --threads values
# timed on the default report (default: 1, 2, 4 and the online CPUs).
# LIMIT_MIB=N: exit 1 when a view's peak RSS passes N MiB (the long test,
# tests/analyzer: 512). VIEWS="default insights ...": only those views.
# Prints one line per view: name, peak RSS (MiB), wall and CPU seconds,
# M events/s by CPU time; then the rates by threads (wall clock, which is
# what more threads shorten; a loaded machine lengthens it).
set -u
events=${1:-100000000}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build-bench}
if [ -z "${ANALYZE:-}" ] || [ -z "${SYNTH:-}" ]; then
    (cd "$root" && cmake -B "$build" -DCMAKE_BUILD_TYPE=Release -DGMEMPROF_SAMPLES=OFF >/dev/null &&
        cmake --build "$build" -j2 --target gmem-analyze gmem-synth >/dev/null) || exit 1
    case $build in /*) ;; *) build=$root/$build ;; esac
fi
analyze=${ANALYZE:-$build/bin/gmem-analyze}
synth=${SYNTH:-$build/bin/gmem-synth}
trace=${TRACE:-/tmp/gmem-rss-$events.zst}
limit=${LIMIT_MIB:-0}
command -v /usr/bin/time >/dev/null 2>&1 || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
if [ ! -s "$trace" ]; then
    echo "writing $trace ($events events)..." >&2
    "$synth" --events "$events" -q -o "$trace" || exit 1
fi
out=$(mktemp -d /tmp/gmem-rss-XXXXXX) || exit 1
trap 'rm -rf "$out"' EXIT
over=""

# view NAME ARGS...: one run; prints the line, notes an RSS over the limit
view() {
    name=$1
    shift
    if [ -n "${VIEWS:-}" ]; then
        case " $VIEWS " in *" $name "*) ;; *) return 0 ;; esac
    fi
    /usr/bin/time -f "%M %e %U %S" -o "$out/time" "$analyze" "$trace" "$@" >"$out/stdout" 2>"$out/stderr"
    rc=$?
    set -- $(tail -n 1 "$out/time")
    awk -v n="$name" -v rc="$rc" -v kb="$1" -v wall="$2" -v u="$3" -v s="$4" -v ev="$events" 'BEGIN {
        cpu = u + s; rate = cpu > 0 ? ev / cpu / 1e6 : 0; note = rc != 0 ? "  (exit " rc ")" : ""
        printf "%-20s rss %8.1f MiB  wall %7.2f s  cpu %7.2f s  %6.1f M events/s%s\n", n, kb / 1024, wall, cpu, rate, note }'
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
        over="$over $name(exit $rc)"
        sed -n 1,3p "$out/stderr" >&2
    fi
    if [ "$limit" -gt 0 ] && [ "$1" -gt $((limit * 1024)) ]; then
        over="$over $name"
    fi
    rm -f "$out"/x.*
}

echo "trace: $trace ($events events, $(wc -c <"$trace") bytes); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
view default
view by_range --by range
view by_alloc --by alloc
view by_alloc_top0 --by alloc --top 0 -f csv
view by_step --by step
view by_tag --by tag
view by_stream --by stream
view by_device --by device
view csv -f csv
view json -f json
view layer_segments --layer segments
view insights --insights
view diff --diff "$trace"
view timeline --timeline "$out/x.html"
view chrome --chrome "$out/x.json"
view chrome_largest --chrome "$out/x.json" --chrome-largest 100000
view sqlite --sqlite "$out/x.db"

if [ -z "${VIEWS:-}" ]; then
    threads=${THREADS:-"1 2 4 $(nproc)"}
    for t in $(echo $threads | tr ' ' '\n' | sort -nu); do
        /usr/bin/time -f "%e %U %S %M" -o "$out/time" "$analyze" "$trace" --threads "$t" >/dev/null 2>&1
        set -- $(tail -n 1 "$out/time")
        awk -v t="$t" -v wall="$1" -v u="$2" -v s="$3" -v kb="$4" -v ev="$events" 'BEGIN {
            rate = wall > 0 ? ev / wall / 1e6 : 0
            printf "threads %-3s wall %7.2f s  %6.1f M events/s (wall)  cpu %7.2f s  rss %6.1f MiB\n", t, wall, rate, u + s, kb / 1024 }'
    done
fi
if [ -n "$over" ]; then
    echo "over ${limit} MiB or failed:$over" >&2
    exit 1
fi
exit 0
