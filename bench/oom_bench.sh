#!/usr/bin/env bash
# The flight recorder's cost in one command, for the device machine:
#
#     bash bench/oom_bench.sh [--fake]
#
# 1. builds Release with the PyTorch bridge (as bench/bridge_bench.sh: the
#    ring then holds the allocator's blocks, segments and the steps);
# 2. bench/run_bench.sh's GPT step ratios, small and medium, in one run:
#    none (unprofiled), gmemprof-oom (gmemprof --on-oom: allocations, blocks,
#    steps and NVTX ranges into the in-memory ring, no kernels, nothing
#    written) and memory-history (torch.cuda.memory._record_memory_history,
#    what a hand-written OOM observer needs on all run), interleaved per
#    round, rounds until the budget (200 s);
# 3. prints the recorder's ratio against the issue's target: <= 1.01 on
#    medium.
# Output ($OUT, default ./bench-out): run_bench.sh's bench.md, bench.json,
# runs.jsonl, logs.tar.gz; oom_ratio.txt.
# --fake: no GPU, torch or profiler (tests the script's plumbing).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 1
bench_torch_begin oom_bench "${1:-}"

say "GPT step ratios: unprofiled, the flight recorder, _record_memory_history"
fake=()
[ "$FAKE" = 1 ] && fake=(--fake)
bash "$ROOT/bench/run_bench.sh" --configs none,gmemprof-oom,memory-history \
    --workloads small,medium --rounds 3 --budget 200 ${fake[@]+"${fake[@]}"}
rc=$?
"$PY" - "$OUT/bench.json" <<'PY' | tee "$OUT/oom_ratio.txt"
import json, sys
try:
    rows = json.load(open(sys.argv[1])).get("rows", [])
except (OSError, ValueError) as e:
    print("oom_bench: no bench.json (%s)" % e)
    sys.exit(0)
for w in ("small", "medium"):
    for c in ("gmemprof-oom", "memory-history"):
        r = next((r for r in rows if r.get("workload") == w and r.get("config") == c), None)
        v = r and r.get("ratio_median")
        tgt = " (target <= 1.01: %s)" % ("PASS" if v <= 1.01 else "MISS") if v and w == "medium" and c == "gmemprof-oom" else ""
        print("%-7s %-15s step ratio %s%s" % (w, c, "%.4f" % v if v else "n/a", tgt))
PY
say "done in $(($(date +%s) - T0)) s; files in $OUT"
exit $rc
