#!/usr/bin/env bash
# The whole profiler's pipeline rate through the fake CUPTI: the e2e app's
# "long" scenario makes 3 x ROUNDS records (allocation, free, kernel) at full
# rate, and this prints what was produced, written and dropped, and the
# writer thread's CPU time (the trace's STATS, read by gmem-analyze).
#   bench/pipeline_rate.sh [ROUNDS] [BUILD_DIR]     (default 2000000, build)
# Extra GMEMPROF_* settings pass through the environment; PERF=1 records the
# run with `perf record -g` (perf.data in the work directory).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
build=${2:-build}
w=$(mktemp -d "${TMPDIR:-/tmp}/gmp-rate.XXXXXX")
run=(env LD_LIBRARY_PATH="$build/tests/profiler/fakecuda" E2E_LIB="$build/lib/libgmemprof.so"
     E2E_FACTS="$w/facts" GMEMPROF_OUTPUT="$w/trace.zst" GMEMPROF_KERNELS=gpu E2E_LONG_N="$n")
[ "${PERF:-0}" = 1 ] && run=(perf record -g -o "$w/perf.data" -- "${run[@]}")
t0=$(date +%s.%N)
"${run[@]}" "$build/bin/gmp_e2e_app" long 2> "$w/stderr"
t1=$(date +%s.%N)
"$build/bin/gmem-analyze" "$w/trace.zst" -f json -n 0 > "$w/analyze.json"
python3 - "$w" "$t0" "$t1" <<'EOF'
import json, sys
w, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
facts = dict(l.strip().split('=', 1) for l in open(w + '/facts') if '=' in l)
s = json.load(open(w + '/analyze.json'))['summary']
written = s['alloc_count'] + s['free_count'] + s['kernels']
cpu = s['profiler_footprint']['host_cpu_ns'] / 1e9
wall = t1 - t0
print(f"produced {int(facts['produced'])}, written {written}, dropped writer {s['dropped']['writer']}, "
      f"dropped cupti {s['dropped']['cupti']}; wall {wall:.2f} s; writer CPU {cpu:.2f} s; "
      f"written/writer-CPU-s {written / cpu / 1e6:.2f} M/s; produced/wall-s {int(facts['produced']) / wall / 1e6:.2f} M/s")
print(f"work directory: {w}")
EOF
