#!/usr/bin/env bash
# A soak of libgmemprof.so through the fake CUPTI: the e2e app's "soak"
# scenario makes records at full rate in windows that repeat (schedule
# wait=1,warmup=0,active=1,repeat=0) for DURATION seconds, while this script
# samples the process every SOAK_PERIOD_S seconds: host RSS, open file
# descriptors, threads. Afterwards: the RSS slope (least squares, KiB/min),
# fd and thread growth, the drop count checked exactly (records written +
# dropped + outside windows == records produced, a FREE whose ALLOC was
# dropped counted as written apart; every record is made in a window, so
# outside windows must be 0), and every window read back by
# gmem-analyze.
#   bench/soak.sh DURATION_S [BUILD_DIR]     (default build: build)
#   bench/soak.sh --report WORK_DIR          the report of a finished run again
# The binaries are copied into the work directory first, so a rebuild during
# the soak does not change the run. Exit status 0 when every check holds.
# Not a CTest test (it runs for as long as asked); docs/benchmarks.md has the
# numbers.
set -euo pipefail
cd "$(dirname "$0")/.."

report() {
    local w=$1 rc=0
    local s=$w/samples.tsv
    echo "soak: $w"
    grep -E '^(produced|emitted|windows|steps)=' "$w/facts" | tr '\n' ' '
    echo
    # RSS slope by least squares over all samples, and over the second half
    # (start-up, first window and buffer pools excluded).
    awk -F'\t' 'NR>1 { n++; x[n]=$1/60; y[n]=$2; fd[n]=$3; th[n]=$4 }
        function slope(a, b,   i, sx, sy, sxx, sxy, m) {
            m = b - a + 1; sx = sy = sxx = sxy = 0
            for (i = a; i <= b; i++) { sx += x[i]; sy += y[i]; sxx += x[i]*x[i]; sxy += x[i]*y[i] }
            return (m * sxx - sx * sx) ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : 0
        }
        END {
            if (n < 3) { print "soak: too few samples (" n ")"; exit 1 }
            minr = maxr = y[1]; minf = maxf = fd[1]; mint = maxt = th[1]
            for (i = 1; i <= n; i++) {
                if (y[i] < minr) minr = y[i]; if (y[i] > maxr) maxr = y[i]
                if (fd[i] < minf) minf = fd[i]; if (fd[i] > maxf) maxf = fd[i]
                if (th[i] < mint) mint = th[i]; if (th[i] > maxt) maxt = th[i]
            }
            h = int(n / 2) + 1
            printf "samples: %d over %.1f min\n", n, x[n] - x[1]
            printf "rss_kib: first %d, last %d, min %d, max %d\n", y[1], y[n], minr, maxr
            printf "rss_slope_kib_per_min: all %.2f, second half %.2f\n", slope(1, n), slope(h, n)
            printf "fds: first %d, last %d, min %d, max %d\n", fd[1], fd[n], minf, maxf
            printf "threads: first %d, last %d, min %d, max %d\n", th[1], th[n], mint, maxt
            if (fd[n] > fd[1] || th[n] > th[1]) { print "soak: FAIL: fd or thread growth"; exit 1 }
        }' "$s" || rc=1
    local an=$w/bin/gmem-analyze json=$w/analyze.json
    local arc=0
    "$an" "$w/trace.zst" -f json -n 0 > "$json" 2> "$w/analyze.err" || arc=$?
    echo "gmem-analyze: exit $arc"
    [ "$arc" = 0 ] || rc=1
    python3 - "$w/facts" "$json" "$w/bin/gmem-analyze" "$w/trace.zst" <<'EOF' || rc=1
import json, subprocess, sys
facts = dict(l.strip().split('=', 1) for l in open(sys.argv[1]) if '=' in l)
d = json.load(open(sys.argv[2]))
s = d['summary']
wins = s['windows']
written = sum(w['alloc_count'] + w['free_count'] + w['kernels'] for w in wins)
drop = s['dropped']
produced = int(facts['produced'])
# outside_windows: records of steps outside every window (trace format 2.2)
outside = drop.get('outside_windows', 0)
# A FREE whose ALLOC was in a dropped buffer is written, but the analyzer
# finds no allocation for it and counts it apart (unmatched_frees), not in
# free_count: it is accounted as written, and each needs a dropped ALLOC.
att = s.get('attribution') or d.get('attribution') or {}
orphan_frees = int(att.get('unmatched_frees', 0))
unaccounted = produced - written - orphan_frees - drop['writer'] - drop['cupti'] - outside
print(f"trace: {d['trace']['records']} records, {d['trace']['file_bytes']} bytes, "
      f"trailer {d['trace']['has_trailer']}, truncated {d['trace']['truncated']}")
print(f"records: produced {produced} (fake CUPTI emitted {facts['emitted']}), written (alloc+free+kernel, "
      f"summed over the windows) {written}, dropped writer {drop['writer']}, dropped cupti {drop['cupti']}, "
      f"outside windows {outside}, frees whose ALLOC was dropped {orphan_frees}, unaccounted {unaccounted}")
# the soak makes records in active steps only: none may land outside a window
ok = unaccounted == 0 and outside == 0 and int(facts['emitted']) == produced
ok = ok and orphan_frees <= drop['writer'] + drop['cupti']
print(f"windows: {len(wins)} in the trace, {facts['windows']} made")
ok = ok and len(wins) == int(facts['windows'])
# windows read on their own (-w N): the first and the last (each read is a
# pass over the whole trace; the pass above read every window)
picks = sorted({0, len(wins) - 1})
bad = []
for n in picks:
    r = subprocess.run([sys.argv[3], sys.argv[4], '-w', str(n), '-f', 'json'], capture_output=True, text=True)
    if r.returncode != 0 or json.loads(r.stdout)['summary']['windows'][0]['window'] != n:
        bad.append(n)
print(f"windows read alone (-w N): {len(picks)}, failed {bad}")
ok = ok and not bad
print("soak: " + ("ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
EOF
    return $rc
}

if [ "${1:-}" = "--report" ]; then
    report "$2"
    exit
fi
dur=${1:?usage: bench/soak.sh DURATION_S [BUILD_DIR] | --report WORK_DIR}
build=${2:-build}
period=${SOAK_PERIOD_S:-10}
w=${SOAK_DIR:-$build/soak}/$(date -u +%Y%m%dT%H%M%S)
mkdir -p "$w/bin" "$w/fakecuda"
cp "$build/lib/libgmemprof.so" "$build/bin/gmp_e2e_app" "$build/bin/gmem-analyze" "$w/bin/"
cp -P "$build"/tests/profiler/fakecuda/* "$w/fakecuda/"
git rev-parse --short HEAD > "$w/commit"
env LD_LIBRARY_PATH="$w/fakecuda" E2E_LIB="$w/bin/libgmemprof.so" E2E_FACTS="$w/facts" \
    GMEMPROF_OUTPUT="$w/trace.zst" GMEMPROF_KERNELS=gpu \
    GMEMPROF_SCHEDULE=wait=1,warmup=0,active=1,repeat=0 E2E_SOAK_S="$dur" \
    "$w/bin/gmp_e2e_app" soak > "$w/stdout" 2> "$w/stderr" &
pid=$!
printf 'elapsed_s\trss_kib\tfds\tthreads\n' > "$w/samples.tsv"
t0=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
    sleep "$period"
    st=/proc/$pid/status
    rss=$(awk '/^VmRSS:/ { print $2 }' "$st" 2>/dev/null) || break
    th=$(awk '/^Threads:/ { print $2 }' "$st" 2>/dev/null) || break
    fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l) || break
    [ -n "$rss" ] && [ -n "$th" ] || break
    printf '%d\t%s\t%s\t%s\n' "$(($(date +%s) - t0))" "$rss" "$fds" "$th" >> "$w/samples.tsv"
done
st=0
wait "$pid" || st=$?
echo "app exit status $st; stderr:"
cat "$w/stderr"
[ "$st" = 0 ] || exit 1
report "$w"
