#!/usr/bin/env bash
# The GPU suite in one command, for the device machine:
#
#     bash tests/gpu/run_all.sh [--dry-run]
#
# 1. builds Release with ninja (build-gpu/, incremental when it exists), the
#    PyTorch bridge included (GMEMPROF_TORCH=ON against $GM_PYTHON's torch);
# 2. runs the check_trace self-test and `ctest -L gpu` (C samples with exact
#    bytes and counts, schedules, NVTX, the PyTorch step/stdout/exit tests,
#    torch.profiler started inside a gmemprof run, the PyTorch bridge's exact
#    allocated/reserved numbers: torch_bridge*); each test's own files
#    (not its trace) go into logs.tar.gz under gpu_tests/;
# 3. runs samples/train_gpt.py under gmemprof in each PyTorch allocator mode
#    (default caching, backend:cudaMallocAsync, expandable_segments:True,
#    PYTORCH_NO_CUDA_MEMORY_CACHING=1) and compares the trace's peak with
#    PyTorch's own counter (tests/gpu/gpu_report.py states the rule), and in
#    the caching modes the bridge's allocated/reserved peaks with
#    max_memory_allocated/reserved (gmem-analyze reads CUDA's allocations
#    with --layer segments, to compare like with like with check_trace);
# 4. records samples/traces/naive.zst and sdpa.zst (backend:cudaMallocAsync,
#    emit_nvtx, --kernels gpu) and diffs them;
# 5. compares per-op self memory of the emit_nvtx ranges with torch.profiler's
#    self_device_memory_usage in a separate run of the same configuration;
# 6. writes $OUT/report.md and $OUT/report.json (every number, PASS/FAIL) and
#    prints a compact summary last.
#
# Output ($OUT, default ./gpu-out; at most 6 files): report.md, report.json,
# naive.zst, sdpa.zst, ctest.log, logs.tar.gz (every log, summary and table).
# Every step runs under `timeout`; the PyTorch runs go 5 at a time in
# parallel. Expected wall time on an H200: about 3-5 minutes (most of it the
# build and the PyTorch process start-ups).
# --dry-run prints the commands instead of running them (tests this script).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
OUT=${OUT:-$ROOT/gpu-out}
BUILD=${GM_BUILD_DIR:-$ROOT/build-gpu}
PY=${GM_PYTHON:-python3}
JOBS=$(nproc 2>/dev/null || echo 4)
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1
WORK=$BUILD/gpu-work
T_START=$(date +%s)
mkdir -p "$OUT" "$BUILD"
rm -rf "$WORK"
mkdir -p "$WORK/logs"
STEPS=$WORK/steps.tsv
: >"$STEPS"
PIDS=()

say() { echo "[run_all +$(($(date +%s) - T_START))s] $*"; }

# run_step NAME TIMEOUT CMD...: in the foreground; output in logs/NAME.log
run_step() {
    local name=$1 t=$2 s rc
    shift 2
    s=$(date +%s)
    if [ "$DRY" = 1 ]; then
        echo "[dry] ($name, ${t}s) $*"
        rc=0
    else
        timeout -k 10 "$t" "$@" >"$WORK/logs/$name.log" 2>&1
        rc=$?
    fi
    printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - s))" >>"$STEPS"
    say "$name: exit $rc ($(($(date +%s) - s)) s)"
    return "$rc"
}

# bg NAME TIMEOUT CMD...: in the background; stdout in NAME.stdout, stderr in
# logs/NAME.stderr, exit status in NAME.rc
bg() {
    local name=$1 t=$2
    shift 2
    if [ "$DRY" = 1 ]; then
        echo "[dry] (&$name, ${t}s) $*"
        echo 0 >"$WORK/$name.rc"
        return
    fi
    (
        s=$(date +%s)
        timeout -k 10 "$t" "$@" >"$WORK/$name.stdout" 2>"$WORK/logs/$name.stderr"
        rc=$?
        echo "$rc" >"$WORK/$name.rc"
        printf '%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - s))" >>"$STEPS"
    ) &
    PIDS+=($!)
}
wait_all() {
    local p
    for p in "${PIDS[@]}"; do wait "$p"; done
    PIDS=()
}

# quiet CPU-side helper: NAME TIMEOUT OUTFILE CMD... (exit status in NAME.rc)
post() {
    local name=$1 t=$2 out=$3 rc
    shift 3
    if [ "$DRY" = 1 ]; then
        echo "[dry] ($name) $* > $out"
        return
    fi
    timeout -k 5 "$t" "$@" >"$out" 2>"$WORK/logs/$name.stderr"
    rc=$?
    echo "$rc" >"$WORK/$name.rc"
}

LAUNCH=$BUILD/bin/gmemprof
ANALYZE=$BUILD/bin/gmem-analyze
CT=$BUILD/bin/check_trace
# relative to the repository root (the current directory): the recorded
# traces' command lines then name no machine's paths
TRAIN=samples/train_gpt.py
# env -u: every run starts from the default allocator unless it says otherwise
CLEAN=(env -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_NO_CUDA_MEMORY_CACHING -u CUDA_INJECTION64_PATH
       -u NVTX_INJECTION64_PATH -u GMEMPROF_SCHEDULE -u GMEMPROF_OUTPUT)
# The small GPT: attention matrices of 8 x 4 x 512 x 512 make naive attention
# cost hundreds of MiB more than SDPA, the whole run takes seconds.
CFG=(--d-model 256 --heads 4 --layers 4 --seq 512 --batch 8 --vocab 2048)

say "OUT=$OUT BUILD=$BUILD python=$PY jobs=$JOBS"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | head -8
    nvcc --version 2>/dev/null | tail -2 | head -1
    timeout 60 "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1
    cmake --version | head -1
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none) $(git -C "$ROOT" status --porcelain 2>/dev/null | wc -l) changed files"
} >"$WORK/env.txt" 2>&1
cat "$WORK/env.txt"

# 1. build
PYBIN=$(command -v "$PY" || echo "$PY")
run_step build 420 bash -c "cmake -S '$ROOT' -B '$BUILD' -G Ninja -DCMAKE_BUILD_TYPE=Release -DGMEMPROF_TORCH=ON -DGMEMPROF_PYTHON='$PYBIN' >/dev/null && cmake --build '$BUILD' -j $JOBS"
BUILD_RC=$?
[ "$BUILD_RC" -ne 0 ] && tail -30 "$WORK/logs/build.log"

if [ "$BUILD_RC" -eq 0 ]; then
    # 2. the checker's own test, then every GPU test
    run_step selftest 120 ctest --test-dir "$BUILD" -R 'check_trace_selftest|gpu.unit.tools_selftest' --output-on-failure
    echo $? >"$WORK/selftest.rc"
    run_step ctest 420 ctest --test-dir "$BUILD" -L gpu --output-on-failure -j 4 --timeout 300
    cp "$WORK/logs/ctest.log" "$WORK/ctest.log" 2>/dev/null
    grep -E 'tests passed|tests failed|Test +#' "$WORK/ctest.log" 2>/dev/null | tail -20
    if [ "$DRY" = 0 ] && [ -d "$BUILD/tests/gpu/out" ]; then
        mkdir -p "$WORK/logs/gpu_tests"
        (cd "$BUILD/tests/gpu/out" && find . -type f ! -name '*.zst' -size -4M -exec cp --parents {} "$WORK/logs/gpu_tests/" \;)
        # who got CUPTI when torch.profiler started inside the run (docs/reliability.md row 17)
        cat "$BUILD/tests/gpu/out/torch_profiler_inside/outcome.txt" 2>/dev/null
        # what the bridge's tracker reports under CUDA graph capture and replay (docs/user-guide.md §7)
        cat "$BUILD/tests/gpu/out/torch_bridge_graph/outcome.txt" 2>/dev/null
        # what PyTorch records of torch.compile'd code (docs/user-guide.md §7.1)
        cat "$BUILD/tests/gpu/out/torch_ops_compile/outcome.txt" 2>/dev/null
    fi

    # 3. allocator modes (and the unprofiled reference), 5 processes at once
    say "PyTorch allocator modes"
    bg plain 240 "${CLEAN[@]}" "$PY" "$TRAIN" "${CFG[@]}" --attn sdpa --alloc-report "$WORK/plain.alloc.json"
    for m in caching async expandable nocache; do
        case $m in
        caching) E=() ;;
        async) E=(PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync) ;;
        expandable) E=(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) ;;
        nocache) E=(PYTORCH_NO_CUDA_MEMORY_CACHING=1) ;;
        esac
        bg "mode_$m" 240 "${CLEAN[@]}" "${E[@]}" "$LAUNCH" -o "$WORK/mode_$m.zst" -- \
            "$PY" "$TRAIN" "${CFG[@]}" --attn sdpa --alloc-report "$WORK/mode_$m.alloc.json"
    done
    wait_all

    # 4 + 5. the sample traces and the torch.profiler comparison, 5 at once
    say "naive/sdpa traces, emit_nvtx vs torch.profiler"
    # --kernels gpu: the sample traces carry the kernels' and copies' GPU
    # times too, so the documentation's examples (--sort time, the diff's
    # kernel time) show them; memory and attribution are those of launch mode
    for v in naive sdpa; do
        bg "$v" 240 "${CLEAN[@]}" PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "$LAUNCH" --kernels gpu -o "$WORK/$v.zst" -- \
            "$PY" "$TRAIN" "${CFG[@]}" --attn "$v" --emit-nvtx --alloc-report "$(realpath --relative-to=. "$WORK")/$v.alloc.json"
    done
    bg cmp_gm 240 "${CLEAN[@]}" PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "$LAUNCH" -o "$WORK/cmp_gm.zst" \
        --schedule wait=2,warmup=1,active=3,repeat=1 -- \
        "$PY" "$TRAIN" "${CFG[@]}" --attn naive --steps 8 --emit-nvtx --alloc-report "$WORK/cmp_gm.alloc.json"
    # op ranges from the bridge: default allocator, no NVTX line in the script
    bg cmp_ops 240 "${CLEAN[@]}" "$LAUNCH" -o "$WORK/cmp_ops.zst" --schedule wait=2,warmup=1,active=3,repeat=1 -- \
        "$PY" "$TRAIN" "${CFG[@]}" --attn naive --steps 8 --no-nvtx
    wait_all
    for v in naive sdpa; do
        bg "ops_$v" 240 "${CLEAN[@]}" "$LAUNCH" -o "$WORK/ops_$v.zst" --schedule wait=2,warmup=1,active=3,repeat=1 -- \
            "$PY" "$TRAIN" "${CFG[@]}" --attn "$v" --steps 8 --no-nvtx
    done
    bg cmp_tp_caching 240 "${CLEAN[@]}" "$PY" "$TRAIN" "${CFG[@]}" --attn naive --steps 8 \
        --torch-profile "$WORK/cmp_tp_caching.json" --tp-schedule 2,1,3
    bg cmp_tp_async 240 "${CLEAN[@]}" PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "$PY" "$TRAIN" "${CFG[@]}" \
        --attn naive --steps 8 --torch-profile "$WORK/cmp_tp_async.json" --tp-schedule 2,1,3
    wait_all

    # 6. CPU side: check_trace facts, gmem-analyze tables, diff, exports
    say "analysis"
    for tr in mode_caching mode_async mode_expandable mode_nocache naive sdpa cmp_gm; do
        post "$tr.summary" 120 "$WORK/$tr.summary.json" "$CT" "$WORK/$tr.zst" --summary
        post "$tr.analyze" 120 "$WORK/$tr.analyze.json" "$ANALYZE" "$WORK/$tr.zst" --layer segments --format json
    done
    post cmp_gm.ranges 120 "$WORK/cmp_gm.ranges.stdout" "$CT" "$WORK/cmp_gm.zst" --ranges "$WORK/cmp_gm.ranges.json" \
        --ranges-scope active
    post naive.table 120 "$WORK/naive.table.txt" "$ANALYZE" "$WORK/naive.zst" --sort mem --top 10
    post naive.by_range 120 "$WORK/naive.by_range.txt" "$ANALYZE" "$WORK/naive.zst" --by range --top 15
    post naive.chrome 120 "$WORK/naive.chrome.stdout" "$ANALYZE" "$WORK/naive.zst" --chrome "$WORK/naive.chrome.json"
    post naive.timeline 120 "$WORK/naive.timeline.stdout" "$ANALYZE" "$WORK/naive.zst" --timeline "$WORK/naive.timeline.html"
    post diff 120 "$WORK/diff.txt" "$ANALYZE" "$WORK/naive.zst" --diff "$WORK/sdpa.zst" --by range
    post diff_kernel 120 "$WORK/diff_kernel.txt" "$ANALYZE" "$WORK/naive.zst" --diff "$WORK/sdpa.zst"
    post cmp_ops.ranges 120 "$WORK/cmp_ops.ranges.stdout" "$CT" "$WORK/cmp_ops.zst" --ranges "$WORK/cmp_ops.ranges.json" \
        --ranges-scope active
    post cmp_ops.summary 120 "$WORK/cmp_ops.summary.json" "$CT" "$WORK/cmp_ops.zst" --summary
    post ops.by_range 120 "$WORK/ops.by_range.txt" "$ANALYZE" "$WORK/cmp_ops.zst" --by range --sort mem --top 10
    post ops.diff 120 "$WORK/ops.diff.txt" "$ANALYZE" "$WORK/ops_naive.zst" --diff "$WORK/ops_sdpa.zst" --by range --top 12
    post diff_json 120 "$WORK/diff.json" "$ANALYZE" "$WORK/naive.zst" --diff "$WORK/sdpa.zst" --by range --format json
fi

# report and outputs
"$PY" "$ROOT/tests/gpu/gpu_report.py" --work "$WORK" --out "$OUT" >"$WORK/report.stdout" 2>"$WORK/logs/report.stderr"
REPORT_RC=$?
for v in naive sdpa; do
    [ -s "$WORK/$v.zst" ] && cp "$WORK/$v.zst" "$OUT/$v.zst"
done
[ -f "$WORK/ctest.log" ] && cp "$WORK/ctest.log" "$OUT/ctest.log"
tar -C "$WORK" --exclude='*.zst' --exclude='*.chrome.json' -czf "$OUT/logs.tar.gz" . 2>/dev/null
say "done in $(($(date +%s) - T_START)) s; files in $OUT:"
ls -l "$OUT"
echo
if [ "$REPORT_RC" -ne 0 ]; then
    echo "gpu_report.py failed:"
    tail -20 "$WORK/logs/report.stderr"
    exit 1
fi
cat "$WORK/report.stdout"
grep -q '^gpu report: PASS' "$WORK/report.stdout"
