#!/usr/bin/env bash
# The PyTorch bridge's cost in one command, for the device machine:
#
#     bash bench/bridge_bench.sh [--fake]
#
# 1. builds Release with the bridge (GMEMPROF_TORCH=ON against $GM_PYTHON's
#    torch; build-gpu/, shared with tests/gpu/run_all.sh);
# 2. one tensor allocation + free through PyTorch's caching allocator, in ns
#    (bench/torch_alloc_cost.py: torch.empty + del, best of 5 medians of
#    100,000 pairs, 16 KiB and 4 MiB): bare, under gmemprof with the bridge
#    (with and without op ranges), under gmemprof with GMEMPROF_TORCH=0
#    (CUPTI alone), and with _record_memory_history;
#    one op's cost (bench/torch_op_cost.py: torch.add on CPU tensors, and on
#    CUDA tensors), bare and under gmemprof with and without op ranges;
# 3. bench/run_bench.sh's GPT step ratios, small and medium, in one run:
#    none, gmemprof-active (the bridge on, with its op ranges),
#    gmemprof-noops (the bridge without op ranges), gmemprof-nobridge,
#    gmemprof-emitnvtx (emit_nvtx under gmemprof) and torch-profiler-full
#    (profile_memory=True), interleaved per round,
#    rounds until the budget (200 s: two rounds on an H200).
# Output ($OUT, default ./bench-out): alloc_cost.txt, op_cost.txt, and run_bench.sh's
# bench.md (with the bridge's targets), bench.json, runs.jsonl, logs.tar.gz.
# Expected wall time on an H200: about 3 minutes after run_all.sh's build.
# --fake: no GPU, torch or profiler (tests the script's plumbing).
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 1
bench_torch_begin bridge_bench "${1:-}"

# cost_line FILE TAG LABEL UNIT CMD...: one run of a bench/TAG.py cost
# script, which prints "TAG LABEL UNIT VALUE ..." on stderr; that line, or
# what failed, is appended to FILE (a placeholder line with --fake).
cost_line() {
    local file=$1 tag=$2 label=$3 unit=$4
    shift 4
    if [ "$FAKE" = 1 ]; then
        echo "$tag $label $unit 0.0 (fake)" >>"$file"
        return
    fi
    local err="$WORK/$tag-${label// /-}.stderr"
    timeout -k 10 120 "${clean_env[@]}" "$@" >/dev/null 2>"$err"
    local line
    line=$(grep "^$tag " "$err" | tail -1)
    echo "${line:-$tag $label failed: $(tail -1 "$err")}" | tee -a "$file"
}

# alloc MODE NUMEL PREFIX...: one torch_alloc_cost.py run into alloc_cost.txt
alloc() {
    local mode=$1 numel=$2
    shift 2
    cost_line "$OUT/alloc_cost.txt" torch_alloc_cost "$mode numel $numel" ns_per_pair \
        env N=100000 ROUNDS=5 NUMEL="$numel" "$@" "$PY" "$ROOT/bench/torch_alloc_cost.py" "$mode"
}
: >"$OUT/alloc_cost.txt"
say "alloc+free cost through the tracker: a small-pool block (16 KiB) and a large one (4 MiB)"
for numel in 4096 1048576; do
    alloc bare $numel
    alloc bridge $numel "$BUILD/bin/gmemprof" -q -o "$WORK/alloc.zst" --
    alloc noops $numel env GMEMPROF_TORCH_OPS=0 "$BUILD/bin/gmemprof" -q -o "$WORK/alloc-noops.zst" --
    alloc nobridge $numel env GMEMPROF_TORCH=0 "$BUILD/bin/gmemprof" -q -o "$WORK/alloc-nobridge.zst" --
    alloc history $numel
done
[ -s "$WORK/alloc.zst" ] && "$BUILD/bin/gmem-analyze" "$WORK/alloc.zst" --format csv 2>/dev/null |
    grep -E '^# (framework|dropped)' >>"$OUT/alloc_cost.txt"
rm -f "$WORK"/alloc*.zst

# opcost MODE DEV PREFIX...: one torch_op_cost.py run (DEV cpu or cuda)
# into op_cost.txt
opcost() {
    local mode=$1 dev=$2
    shift 2
    cost_line "$OUT/op_cost.txt" torch_op_cost "$mode $dev" ns_per_op \
        env N=200000 ROUNDS=5 "$@" "$PY" "$ROOT/bench/torch_op_cost.py" "$mode" --"$dev"
}
: >"$OUT/op_cost.txt"
say "one op's cost: a CPU op (no GPU work) and a CUDA op (alloc, launch, free), two passes"
for pass in 1 2; do
    for dev in cpu cuda; do
        opcost bare "$dev"
        opcost ops "$dev" "$BUILD/bin/gmemprof" -q -o "$WORK/op.zst" --
        opcost noops "$dev" env GMEMPROF_TORCH_OPS=0 "$BUILD/bin/gmemprof" -q -o "$WORK/op.zst" --
    done
done
rm -f "$WORK"/op*.zst

say "GPT step ratios, bridge on and off, beside torch.profiler"
fake=()
[ "$FAKE" = 1 ] && fake=(--fake)
bash "$ROOT/bench/run_bench.sh" --configs none,gmemprof-active,gmemprof-noops,gmemprof-nobridge,gmemprof-emitnvtx,torch-profiler-full \
    --workloads small,medium --rounds 3 --budget 200 ${fake[@]+"${fake[@]}"}
rc=$?
say "done in $(($(date +%s) - T0)) s; files in $OUT"
cat "$OUT/alloc_cost.txt" "$OUT/op_cost.txt"
exit $rc
