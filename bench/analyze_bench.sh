#!/bin/sh
# Analyzer throughput: gmem-analyze (default table) on a gmem-synth trace.
#
#   bench/analyze_bench.sh [EVENTS]          default 100000000 (100 M)
#
# Builds a Release tree in $BUILD (default build-bench), writes the trace
# once to $TRACE (default /tmp/gmem-bench-EVENTS.gmt), then times
#   - gmem-analyze TRACE            (summary + top-10 kernel table)
#   - a reader-only pass            (gmt_reader_next in a loop: the floor
#                                    the decompression and decoding set)
#   - the same in batches           (gmt_reader_next_hot runs and
#                                    gmt_reader_next between them, as
#                                    gmem-analyze reads)
# with /usr/bin/time -v, and prints events/s (by wall time and by CPU
# time = user + sys, which a loaded machine distorts less) and peak RSS.
# RUNS=N (default 1) runs each N times, alternating, and keeps the run with
# the least CPU time: on a shared VM other tenants slow a run down, never
# speed it up, so the minimum is the best estimate of the unloaded cost; a
# line under the table gives each gmem-analyze's min, median and max CPU
# time over its runs, which shows how much the load moved them.
# BASE=PATH (a gmem-analyze built from another commit) runs it too, its runs
# alternating with this tree's in the same minutes, for a before/after that
# the machine's drift cannot fake; the last line is their ratio.
# BASE_TRACE=PATH: the trace the baseline reads, when the trace format
# changed between the two (write it with the baseline's gmem-synth, same
# --events and seed; default: TRACE).  BASE_LIB=PATH (the baseline's
# lib/libgmt.a, in a build directory of its source tree, or BASE_SRC=its
# source root) adds a reader-only run of the baseline, alternating too.
# Targets (issue 4): >= 20 M events/s on one core, peak RSS <= 200 MiB.
set -eu
events=${1:-100000000}
runs=${RUNS:-1}
build=${BUILD:-build-bench}
trace=${TRACE:-/tmp/gmem-bench-$events.gmt}
base_trace=${BASE_TRACE:-$trace}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

command -v /usr/bin/time >/dev/null 2>&1 || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
cmake -B "$build" -DCMAKE_BUILD_TYPE=Release -DGMEMPROF_SAMPLES=OFF >/dev/null
cmake --build "$build" -j2 --target gmem-analyze gmem-synth gmt >/dev/null

if [ ! -s "$trace" ]; then
    echo "writing $trace ($events events)..." >&2
    "$build/bin/gmem-synth" --events "$events" -o "$trace" >&2
fi

# The reader-only floor, compiled against the same library.
floor_src=$(mktemp /tmp/gma-floor-XXXXXX.c)
floor_bin=${floor_src%.c}
trap 'rm -f "$floor_src" "$floor_bin" "$floor_bin.batch" "$floor_bin.base" "$floor_bin.time" "$floor_bin.out" "$floor_bin".cpu.*' EXIT
cat >"$floor_src" <<'C'
#include <stdio.h>
#include "gmt_io.h"
int main(int argc, char **argv)
{
    gmt_reader *r = gmt_reader_open(argv[1]);
    gmt_record rec;
    unsigned long long n = 0, sum = 0;
    if (!r)
        return 1;
#ifdef FLOOR_BATCH
    gmt_hot hot[64];
    for (;;) {
        size_t k = gmt_reader_next_hot(r, hot, 64);
        for (size_t i = 0; i < k; i++)
            sum += (unsigned)hot[i].type;
        n += k;
        if (k == 64)
            continue;
        if (gmt_reader_next(r, &rec) <= 0)
            break;
        n++;
        sum += (unsigned)rec.type;
    }
#else
    while (gmt_reader_next(r, &rec) > 0) {
        n++;
        sum += (unsigned)rec.type;
    }
#endif
    const gmt_reader_end *e = gmt_reader_end_info(r);
    printf("%llu %llu %u.%u %u.%u\n", n, sum, e->major, e->minor, GMT_VERSION_MAJOR, GMT_VERSION_MINOR);
    gmt_reader_close(r);
    return 0;
}
C
${CC:-cc} -O2 -std=c11 -Iinclude -Icommon "$floor_src" "$build/lib/libgmt.a" -lzstd -o "$floor_bin"
${CC:-cc} -O2 -std=c11 -DFLOOR_BATCH -Iinclude -Icommon "$floor_src" "$build/lib/libgmt.a" -lzstd -o "$floor_bin.batch"
base_floor=
if [ -n "${BASE_LIB:-}" ]; then
    [ -f "$BASE_LIB" ] || { echo "BASE_LIB=$BASE_LIB is not a file" >&2; exit 1; }
    base_src=${BASE_SRC:-$(cd "$(dirname "$BASE_LIB")/../.." && pwd)}
    base_floor=$floor_bin.base
    ${CC:-cc} -O2 -std=c11 -I"$base_src/include" -I"$base_src/common" "$floor_src" "$BASE_LIB" -lzstd \
        -o "$base_floor"
fi
[ -s "$base_trace" ] || { echo "BASE_TRACE=$base_trace does not exist" >&2; exit 1; }

# run1 LABEL CMD...: prints "label wall user sys rss_kib"
run1() {
    label=$1
    shift
    /usr/bin/time -v "$@" >"$floor_bin.out" 2>"$floor_bin.time" || { cat "$floor_bin.time" >&2; exit 1; }
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$floor_bin.time" |
        awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')
    user=$(sed -n 's/.*User time (seconds): //p' "$floor_bin.time")
    sys=$(sed -n 's/.*System time (seconds): //p' "$floor_bin.time")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$floor_bin.time")
    echo "$label $wall $user $sys $rss"
}

# pick_best LINE LINE: the one with the least user + sys (an empty one loses)
pick_best() {
    printf '%s\n%s\n' "$1" "$2" | awk 'NF { c = $3 + $4; if (!n++ || c < m) { m = c; l = $0 } } END { print l }'
}

# run LABEL CMD...: run1, RUNS times; the line with the least user + sys.
# Every run's CPU time is appended to $floor_bin.cpu.LABEL (spread below).
run() {
    best=
    i=0
    while [ "$i" -lt "$runs" ]; do
        line=$(run1 "$@")
        echo "$line" | awk '{ print $3 + $4 }' >>"$floor_bin.cpu.$1"
        best=$(pick_best "$best" "$line")
        i=$((i + 1))
    done
    echo "$best"
}

# spread LABEL: "LABEL CPU s over N runs: min, median, max" (the minimum is
# the figure above; the rest shows how much the machine's load moved it)
spread() {
    sort -n "$floor_bin.cpu.$1" | awk -v l="$1" '{ v[NR] = $1 } END {
        if (NR > 1) printf "%s CPU s over %d runs: min %.2f, median %.2f, max %.2f\n", l, NR, v[1],
                           NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[NR] }'
}

floor_out=$("$floor_bin" "$trace")
# The default trace is kept between runs: write it again when this tree's
# format version is newer than the one it was written in.
if [ -z "${TRACE:-}" ] && [ "$(echo "$floor_out" | cut -d' ' -f3)" != "$(echo "$floor_out" | cut -d' ' -f4)" ]; then
    echo "rewriting $trace (version $(echo "$floor_out" | cut -d' ' -f3), this tree writes" \
        "$(echo "$floor_out" | cut -d' ' -f4))..." >&2
    "$build/bin/gmem-synth" --events "$events" -o "$trace" >&2
    floor_out=$("$floor_bin" "$trace")
fi
records=$(echo "$floor_out" | cut -d' ' -f1)
size=$(wc -c <"$trace")
echo "trace: $trace, $records records, $size bytes compressed"
if [ "$base_trace" != "$trace" ]; then
    echo "baseline trace: $base_trace, $(wc -c <"$base_trace") bytes compressed"
fi
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); best of $runs run(s) each"
printf '%-22s %10s %10s %14s %14s %10s\n' "run" "wall s" "cpu s" "M events/s" "M ev/s (cpu)" "peak RSS"
show() {
    echo "$1" | awk -v n="$records" '{
        cpu = $3 + $4;
        printf "%-22s %10.2f %10.2f %14.1f %14.1f %7.1f MiB\n", $1, $2, cpu,
               ($2 > 0 ? n / $2 / 1e6 : 0), (cpu > 0 ? n / cpu / 1e6 : 0), $5 / 1024 }'
}
# the reader-only runs (and the baseline's, with BASE_LIB), taking turns
fbest= rbest= bbest=
i=0
while [ "$i" -lt "$runs" ]; do
    if [ -n "$base_floor" ]; then
        fbest=$(pick_best "$fbest" "$(run1 "reader-only(base)" "$base_floor" "$base_trace")")
    fi
    rbest=$(pick_best "$rbest" "$(run1 "reader-only" "$floor_bin" "$trace")")
    bbest=$(pick_best "$bbest" "$(run1 "reader-only(batch)" "$floor_bin.batch" "$trace")")
    i=$((i + 1))
done
if [ -n "$base_floor" ]; then
    show "$fbest"
fi
show "$rbest"
show "$bbest"
if [ -z "${BASE:-}" ]; then
    show "$(run "gmem-analyze" "$build/bin/gmem-analyze" "$trace")"
    spread gmem-analyze
else
    [ -x "$BASE" ] || { echo "BASE=$BASE is not an executable" >&2; exit 1; }
    # best of RUNS each, base and this tree taking turns
    bbest= nbest=
    i=0
    while [ "$i" -lt "$runs" ]; do
        bbest=$(pick_best "$bbest" "$(runs=1 run "gmem-analyze(base)" "$BASE" "$base_trace")")
        nbest=$(pick_best "$nbest" "$(runs=1 run "gmem-analyze" "$build/bin/gmem-analyze" "$trace")")
        i=$((i + 1))
    done
    show "$bbest"
    show "$nbest"
    spread "gmem-analyze(base)"
    spread gmem-analyze
    printf '%s\n%s\n' "$bbest" "$nbest" | awk 'NR == 1 { b = $3 + $4 } NR == 2 { c = $3 + $4 }
        END { if (c > 0) { d = (b / c - 1) * 100
                           printf "this tree / base, CPU time: %.3f (%.1f%% %s)\n", c / b, d < 0 ? -d : d,
                                  d < 0 ? "slower" : "faster" } }'
fi
echo "targets: >= 20 M events/s on one core; peak RSS <= 200 MiB"
