#!/usr/bin/env bash
# One GPU test, run by CTest (label "gpu"): tests/gpu/gpu_test.sh NAME
#
# Exit 0 pass, 1 fail, 77 skip (no GPU: `nvidia-smi -L` fails or there is no
# /dev/nvidia*; PyTorch tests also skip when `import torch` fails or sees no
# GPU). Every command runs under `timeout`, so a hang fails one test instead
# of eating the GPU budget.
#
# Environment (set by tests/gpu/CMakeLists.txt):
#   GM_BUILD  the build tree (bin/gmemprof, lib/libgmemprof.so, bin/check_trace,
#             bin/gm_* samples)
#   GM_SRC    the source tree
#   GM_WORK   where each test writes its files (GM_WORK/NAME/: trace, logs)
#   GM_PYTHON python with torch (default python3)
#   GM_ASSUME_GPU=1 skips the GPU probe (to test this script on a fake tree)
set -u

name=${1:?usage: gpu_test.sh NAME}
: "${GM_BUILD:?}" "${GM_SRC:?}" "${GM_WORK:?}"
PY=${GM_PYTHON:-python3}
BIN=$GM_BUILD/bin
LIB=$GM_BUILD/lib/libgmemprof.so
LAUNCH=$BIN/gmemprof
CT=$BIN/check_trace
T=${GM_TIMEOUT:-150}
W=$GM_WORK/$name
rm -rf "$W"
mkdir -p "$W"
failures=0
RC=0

skip() {
    echo "SKIP $name: $*"
    exit 77
}
fail() {
    echo "FAIL $name: $*"
    failures=$((failures + 1))
}
pass() { echo "ok   $name: $*"; }

need_gpu() {
    # GM_ASSUME_GPU=1: test this script's own logic on a fake build tree
    [ "${GM_ASSUME_GPU:-0}" = 1 ] && return 0
    command -v nvidia-smi >/dev/null 2>&1 || skip "no nvidia-smi"
    nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi -L failed"
    compgen -G '/dev/nvidia*' >/dev/null || skip "no /dev/nvidia*"
}
need_torch() {
    "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1 ||
        skip "PyTorch with CUDA is not importable by $PY"
}
need_built() {
    local f
    for f in "$LAUNCH" "$LIB" "$CT" "$@"; do
        [ -e "$f" ] || { echo "FAIL $name: not built: $f"; exit 1; }
    done
}

# same_copies GPU_TRACE LAUNCH_TRACE: the MEMCPY/MEMSET records of a GPU-mode
# trace (CUPTI's activity) and of a launch-mode one (the copy calls) are the
# same, field for field but the times, ids and thread ids.
same_copies() {
    local f
    for f in "$1" "$2"; do
        "$BIN/gmt-dump" "$f" 2>/dev/null | grep -E '^(memcpy|memset) ' |
            sed -E 's/ (start|end|corr|tid)=[0-9]+//g' | sort >"$f.copies"
    done
    if [ -s "$1.copies" ] && cmp -s "$1.copies" "$2.copies"; then
        pass "launch mode: the same $(wc -l <"$1.copies") memcpy/memset records as GPU mode (kind, bytes, memory kinds, stream, device, step)"
    else
        fail "launch mode's copies differ from GPU mode's: $(diff "$1.copies" "$2.copies" | head -8 | tr '\n' ' ')"
    fi
}

# prof TRACE SCHEDULE -- CMD...   (SCHEDULE "" = none) -> RC, $W/stdout, $W/stderr
prof() {
    local trace=$1 sched=$2
    shift 3
    local sargs=()
    [ -n "$sched" ] && sargs=(--schedule "$sched")
    timeout -k 10 "$T" "$LAUNCH" -o "$trace" "${sargs[@]}" -- "$@" >"$W/stdout" 2>"$W/stderr"
    RC=$?
    [ "$RC" -eq 124 ] && fail "timed out after ${T}s: $*"
}

# inject TRACE SCHEDULE -- CMD...: no launcher, only CUDA_INJECTION64_PATH
# (NVTX_INJECTION64_PATH deliberately unset: the library must set it).
inject() {
    local trace=$1 sched=$2
    shift 3
    timeout -k 10 "$T" env -u NVTX_INJECTION64_PATH CUDA_INJECTION64_PATH="$LIB" \
        GMEMPROF_OUTPUT="$trace" GMEMPROF_SCHEDULE="$sched" "$@" >"$W/stdout" 2>"$W/stderr"
    RC=$?
    [ "$RC" -eq 124 ] && fail "timed out after ${T}s: $*"
}

# plain OUTFILE -- CMD...: unprofiled reference run -> PLAIN_RC
plain() {
    local out=$1
    shift 2
    timeout -k 10 "$T" env -u CUDA_INJECTION64_PATH -u NVTX_INJECTION64_PATH "$@" >"$out" 2>"$W/plain.stderr"
    PLAIN_RC=$?
}

expect_rc() {
    if [ "$RC" -eq "$1" ]; then pass "exit status $RC"; else fail "exit status $RC, expected $1"; fi
}
expect_stdout_text() {
    if [ "$(cat "$W/stdout")" = "$1" ] && [ "$(wc -l <"$W/stdout")" -eq 1 ]; then
        pass "stdout is exactly the requested line"
    else
        fail "stdout differs from '$1': $(head -c 300 "$W/stdout")"
    fi
}
expect_same_stdout() {
    if cmp -s "$1" "$W/stdout"; then
        pass "stdout byte-identical to the unprofiled run ($(wc -c <"$1") bytes)"
    else
        fail "stdout differs from the unprofiled run"
        diff "$1" "$W/stdout" | head -20
    fi
}
check() {
    local trace=$1
    shift
    if [ ! -s "$trace" ]; then
        fail "no trace written at $trace"
        return
    fi
    timeout -k 5 60 "$CT" "$trace" "$@" 2>"$W/check.log" >"$W/check.out"
    local rc=$?
    grep -v -e '^ok ' -e '^check_trace: ' "$W/check.log"
    local last
    last=$(tail -1 "$W/check.log")
    if [ "$rc" -ne 0 ]; then fail "${last:-check_trace exit $rc}"; else pass "$last"; fi
    "$CT" "$trace" --summary >"$W/summary.json" 2>/dev/null || true
}
# oom_check KIND EXPECT: the dump $W/dump.zst against what the program
# (cuda) or PyTorch's error (torch) said, by tests/gpu/oom_check.py.
oom_check() {
    timeout -k 5 60 "$BIN/gmt-dump" "$W/dump.zst" >"$W/dump.txt" 2>/dev/null
    if "$PY" "$GM_SRC/tests/gpu/oom_check.py" "$W/dump.txt" "$1" "$2" >"$W/oom_check.txt" 2>&1; then
        pass "$(tr '\n' ';' <"$W/oom_check.txt")"
    else
        fail "$(tail -1 "$W/oom_check.txt")"
    fi
}
# ranks_csv TRACE0 TRACE1 PEAK0 PEAK1: gmem-analyze --by rank on both
# traces must list ranks 0 and 1 with the peaks check_trace computed (of
# CUDA's allocations: --layer segments, also where the PyTorch bridge
# recorded tensor blocks).
ranks_csv() {
    local out=$W/by_rank.csv
    if ! timeout -k 5 60 "$BIN/gmem-analyze" "$1" "$2" --by rank --layer segments --format csv >"$out" 2>"$W/by_rank.err"; then
        fail "gmem-analyze --by rank failed: $(head -c 300 "$W/by_rank.err")"
        return
    fi
    if "$PY" - "$out" "$3" "$4" <<'PY'
import csv, sys
rows = {}
with open(sys.argv[1]) as f:
    lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
for row in csv.DictReader(lines):
    if (row.get("rank") or "").isdigit():
        rows[int(row["rank"])] = row
peak = lambda r: int(rows[r].get("peak_bytes") or rows[r].get("peak") or -1)
ok = sorted(rows) == [0, 1] and peak(0) == int(sys.argv[2]) and peak(1) == int(sys.argv[3])
print("ranks %s, peaks %s" % (sorted(rows), [peak(r) for r in sorted(rows)]))
sys.exit(0 if ok else 1)
PY
    then pass "gmem-analyze --by rank: ranks 0 and 1 with the expected peaks"
    else fail "gmem-analyze --by rank: $(head -c 400 "$out")"
    fi
}
finish() {
    if [ "$failures" -gt 0 ]; then
        echo "---- profiler stderr (tail) ----"
        tail -20 "$W/stderr" 2>/dev/null
        echo "---- $name: $failures failure(s); files in $W"
        exit 1
    fi
    exit 0
}

S="$BIN"
TS="$GM_SRC/tests/gpu/torch_steps.py"
case $name in
alloc_kinds)
    need_gpu; need_built "$S/gm_alloc_kinds"
    prof "$W/trace.zst" "" -- "$S/gm_alloc_kinds" --json "$W/expect.json" --say "alloc_kinds done"
    expect_rc 0; expect_stdout_text "alloc_kinds done"
    check "$W/trace.zst" --expect-json "$W/expect.json" --expect windows=1 --expect free_order=0
    # Launch mode (the default, above) reads copies from their API calls;
    # GPU mode takes them from CUPTI's activity: the same copies, field for
    # field but the times and ids (start = end in launch mode; other tids).
    GMEMPROF_KERNELS=gpu prof "$W/gpu.zst" "" -- "$S/gm_alloc_kinds" --json "$W/expect-gpu.json"
    expect_rc 0
    check "$W/gpu.zst" --expect-json "$W/expect-gpu.json" --expect windows=1
    same_copies "$W/gpu.zst" "$W/trace.zst"
    ;;
threads)
    need_gpu; need_built "$S/gm_threads"
    prof "$W/trace.zst" "" -- "$S/gm_threads" --threads 4 --json "$W/expect.json" --say "threads done" --exit 5
    expect_rc 5; expect_stdout_text "threads done"
    check "$W/trace.zst" --expect-json "$W/expect.json" --expect windows=1 --expect distinct_alloc_tids_min=4 --expect free_order=0
    ;;
steps_whole)
    need_gpu; need_built "$S/gm_steps"
    prof "$W/trace.zst" "" -- "$S/gm_steps" --steps 6 --json "$W/expect.json" --say "steps done"
    expect_rc 0; expect_stdout_text "steps done"
    check "$W/trace.zst" --expect-json "$W/expect.json" --expect windows=1 --expect step_source=api
    ;;
steps_sched)
    need_gpu; need_built "$S/gm_steps"
    prof "$W/trace.zst" "wait=2,warmup=1,active=3,repeat=1" -- "$S/gm_steps" --steps 10 --json "$W/expect.json"
    expect_rc 0
    check "$W/trace.zst" --expect-json "$W/expect.json" --expect windows=1 --expect active_steps=3 \
        --expect first_active_step=3 --expect step_source=api --expect kernels_in_window=1
    ;;
steps_repeat)
    need_gpu; need_built "$S/gm_steps"
    prof "$W/trace.zst" "skip_first=1,wait=1,warmup=1,active=2,repeat=2" -- "$S/gm_steps" --steps 12 --json "$W/expect.json"
    expect_rc 0
    check "$W/trace.zst" --expect-json "$W/expect.json" --expect windows=2 --expect active_steps=4 \
        --expect first_active_step=3 --expect kernels_in_window=1
    ;;
steps_time)
    # time-based window: 10 iterations of ~100 ms, window from 0.3 s for 0.4 s
    need_gpu; need_built "$S/gm_steps"
    prof "$W/trace.zst" "delay=300ms,duration=400ms" -- "$S/gm_steps" --steps 10 --sleep-ms 100
    expect_rc 0
    check "$W/trace.zst" --expect windows=1 --expect kernels_min=2 --expect trailer=1 --expect dropped=0
    ;;
nvtx_mark_sched)
    need_gpu; need_built "$S/gm_nvtx_steps"
    prof "$W/trace.zst" "wait=2,warmup=1,active=3,repeat=1" -- "$S/gm_nvtx_steps" --style mark --steps 10 --json "$W/expect.json"
    expect_rc 0
    check "$W/trace.zst" --expect-json "$W/expect.json" --expect windows=1 --expect active_steps=3 \
        --expect first_active_step=3 --expect step_source=nvtx --expect kernels_in_window=1
    ;;
nvtx_numbered_whole)
    need_gpu; need_built "$S/gm_nvtx_steps"
    prof "$W/trace.zst" "" -- "$S/gm_nvtx_steps" --style numbered --steps 5 --json "$W/expect.json"
    expect_rc 0
    check "$W/trace.zst" --expect-json "$W/expect.json" --expect windows=1 --expect step_source=nvtx
    ;;
nvtx_range_sched)
    need_gpu; need_built "$S/gm_nvtx_steps"
    prof "$W/trace.zst" "wait=1,warmup=1,active=2,repeat=1" -- "$S/gm_nvtx_steps" --style range --steps 6 --json "$W/expect.json"
    expect_rc 0
    check "$W/trace.zst" --expect-json "$W/expect.json" --expect windows=1 --expect active_steps=2 \
        --expect first_active_step=2 --expect step_source=nvtx
    ;;
nvtx_injection_only)
    need_gpu; need_built "$S/gm_nvtx_steps"
    inject "$W/trace.zst" "wait=2,warmup=1,active=3,repeat=1" -- "$S/gm_nvtx_steps" --style mark --steps 10 --json "$W/expect.json" --say "nvtx done"
    expect_rc 0; expect_stdout_text "nvtx done"
    check "$W/trace.zst" --expect-json "$W/expect.json" --expect windows=1 --expect active_steps=3 \
        --expect first_active_step=3 --expect step_source=nvtx
    ;;
torch_sched)
    need_gpu; need_torch; need_built
    plain "$W/plain.out" -- "$PY" "$TS" --steps 8
    [ "$PLAIN_RC" -eq 0 ] || fail "unprofiled run exited $PLAIN_RC"
    prof "$W/trace.zst" "wait=2,warmup=1,active=3" -- "$PY" "$TS" --steps 8
    expect_rc 0; expect_same_stdout "$W/plain.out"
    check "$W/trace.zst" --expect windows=1 --expect active_steps=3 --expect first_active_step=3 \
        --expect baseline_count_min=1 --expect baseline_bytes_min=1 --expect kernels_min=3 \
        --expect kernels_in_window=1 --expect step_source=nvtx --expect tags_min=3 \
        --expect trailer=1 --expect dropped=0 --expect unmatched=0
    ;;
torch_launch)
    # Launch mode against GPU mode on the same deterministic loop: the same
    # kernels, launch for launch, and the same memory attributed to each
    # (launch mode hears PyTorch's runtime launches through the driver's
    # cuLaunchKernel alone: a runtime path without a nested driver launch
    # would show here as missing calls).
    need_gpu; need_torch; need_built
    GMEMPROF_KERNELS=gpu prof "$W/gpu.zst" "wait=2,warmup=1,active=3" -- "$PY" "$TS" --steps 8
    expect_rc 0; cp "$W/stdout" "$W/gpu.stdout"
    GMEMPROF_KERNELS=launch GMEMPROF_LOG=debug prof "$W/launch.zst" "wait=2,warmup=1,active=3" -- "$PY" "$TS" --steps 8
    expect_rc 0; expect_same_stdout "$W/gpu.stdout"
    cp "$W/stderr" "$W/launch.stderr"
    # GPU mode joins every kernel record with its driver launch callback
    check "$W/gpu.zst" --expect kernels_min=3 --expect kernels_in_window=1 --expect dropped=0 --expect unmatched=0 \
        --expect free_order=0
    check "$W/launch.zst" --expect windows=1 --expect active_steps=3 --expect kernels_min=3 \
        --expect kernels_in_window=1 --expect trailer=1 --expect dropped=0 --expect free_order=0
    for m in gpu launch; do
        timeout -k 5 60 "$BIN/gmem-analyze" "$W/$m.zst" --by kernel --sort name --top 0 --format csv \
            >"$W/$m.kernels.csv" 2>"$W/$m.analyze.err" || fail "gmem-analyze $m.zst: $(head -c 300 "$W/$m.analyze.err")"
    done
    if "$PY" - "$W/gpu.kernels.csv" "$W/launch.kernels.csv" <<'PY'
import csv, sys
def rows(path):
    with open(path) as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    keys = ("calls", "alloc_bytes", "freed_bytes", "alloc_count", "free_count")
    return {r["name"]: tuple(r[k] for k in keys) for r in csv.DictReader(lines)}
g, l = rows(sys.argv[1]), rows(sys.argv[2])
calls = lambda d: sum(int(v[0] or 0) for v in d.values())
print("gpu mode: %d kernels, %d calls; launch mode: %d kernels, %d calls" % (len(g), calls(g), len(l), calls(l)))
for name in sorted(set(g) | set(l)):
    if g.get(name) != l.get(name):
        print("differs: %s gpu=%s launch=%s" % (name, g.get(name), l.get(name)))
sys.exit(0 if g == l and calls(g) >= 3 else 1)
PY
    then pass "launch mode: the same kernels, calls and attributed bytes as GPU mode"
    else fail "launch mode and GPU mode disagree on the kernel table"
    fi
    # launch mode's per-thread caches hold the loop's kernels: a name is sent
    # and a function's attributes asked about once per launching thread (the
    # main thread and autograd's), not on every launch (a thrashing cache
    # cost 3-4% of a small GPT step)
    if "$PY" - "$W/launch.stderr" "$W/launch.kernels.csv" <<'PY'
import re, sys
m = re.search(r"cache misses: (\d+) names sent, (\d+) functions queried", open(sys.argv[1]).read())
with open(sys.argv[2]) as f:
    kernels = sum(1 for ln in f if ln.strip() and not ln.startswith("#")) - 1
if not m or kernels < 1:
    print("no cache-miss line in the debug log, or no kernels (%d)" % kernels)
    sys.exit(1)
names, funcs = int(m.group(1)), int(m.group(2))
print("%d kernels; %d names sent, %d functions queried" % (kernels, names, funcs))
sys.exit(0 if names <= 2 * kernels + 8 and funcs <= 2 * kernels + 8 else 1)
PY
    then pass "launch mode: one name and one attribute query per kernel and thread"
    else fail "launch mode's per-thread caches missed: $(grep -o 'cache misses:[^\n]*' "$W/launch.stderr")"
    fi
    # and the same copies (the loop's .item() calls are device-to-host copies)
    same_copies "$W/gpu.zst" "$W/launch.zst"
    ;;
torch_exit)
    need_gpu; need_torch; need_built
    plain "$W/plain.out" -- "$PY" "$TS" --steps 4 --exit-code 3
    [ "$PLAIN_RC" -eq 3 ] || fail "unprofiled run exited $PLAIN_RC, expected 3"
    prof "$W/trace.zst" "" -- "$PY" "$TS" --steps 4 --exit-code 3
    expect_rc 3; expect_same_stdout "$W/plain.out"
    check "$W/trace.zst" --expect windows=1 --expect trailer=1 --expect kernels_min=1 --expect dropped=0
    ;;
torch_injection_only)
    need_gpu; need_torch; need_built
    plain "$W/plain.out" -- "$PY" "$TS" --steps 8
    inject "$W/trace.zst" "wait=2,warmup=1,active=3" -- "$PY" "$TS" --steps 8
    expect_rc 0; expect_same_stdout "$W/plain.out"
    check "$W/trace.zst" --expect windows=1 --expect active_steps=3 --expect first_active_step=3 \
        --expect baseline_count_min=1 --expect kernels_in_window=1 --expect step_source=nvtx --expect trailer=1
    ;;
torch_ranks)
    # Two ranks of torch.distributed (Gloo) sharing one GPU under torchrun;
    # one trace per rank through %r. Rank r holds an extra (r+1) * 32 MiB
    # tensor (tests/gpu/torch_ranks.py), so the peaks differ by exactly 32 MiB.
    need_gpu; need_torch; need_built "$BIN/gmem-analyze"
    TR="$GM_SRC/tests/gpu/torch_ranks.py"
    run=("$PY" -m torch.distributed.run --standalone --nproc_per_node=2 "$TR" --steps 6)
    plain "$W/plain.out" -- "${run[@]}"
    [ "$PLAIN_RC" -eq 0 ] || fail "unprofiled run exited $PLAIN_RC"
    prof "$W/trace-%r.zst" "wait=1,warmup=1,active=3" -- "${run[@]}"
    expect_rc 0; expect_same_stdout "$W/plain.out"
    for r in 0 1; do
        check "$W/trace-$r.zst" --expect rank=$r --expect world_size=2 --expect windows=1 \
            --expect active_steps=3 --expect kernels_in_window=1 --expect trailer=1 --expect dropped=0
    done
    p0=$("$CT" "$W/trace-0.zst" --print-peak 2>/dev/null)
    p1=$("$CT" "$W/trace-1.zst" --print-peak 2>/dev/null)
    if [ -n "$p0" ] && [ -n "$p1" ] && [ $((p1 - p0)) -eq $((32 * 1024 * 1024)) ]; then
        pass "rank 1 peak - rank 0 peak = 32 MiB exactly ($p1 - $p0)"
    else
        fail "rank 1 peak - rank 0 peak: expected 33554432, got ${p1:-?} - ${p0:-?}"
    fi
    ranks_csv "$W/trace-0.zst" "$W/trace-1.zst" "$p0" "$p1"
    ;;
torch_profiler_inside)
    # docs/reliability.md row 17: torch.profiler(activities=[CPU, CUDA]) started
    # after CUDA, inside a launcher run. One CUPTI subscriber per process: either
    # gmemprof came first (it subscribes in cuInit) and Kineto is refused --
    # then gmemprof's trace must be complete, with kernels in the steps after
    # the profiler too -- or gmemprof was the one refused and says so in one
    # `gmemprof:` line. Either way: exit status and stdout unchanged.
    need_gpu; need_torch; need_built "$BIN/gmem-analyze"
    TPI="$GM_SRC/tests/gpu/torch_profiler_inside.py"
    WARM=3 PROF=3 AFTER=3
    TARGS=(--warm-steps $WARM --prof-steps $PROF --after-steps $AFTER)
    plain "$W/plain.out" -- "$PY" "$TPI" "${TARGS[@]}" --report "$W/plain.report.json"
    [ "$PLAIN_RC" -eq 0 ] || fail "unprofiled run exited $PLAIN_RC"
    echo "torch.profiler without gmemprof: $(tr -d '\n' <"$W/plain.report.json" 2>/dev/null)"
    prof "$W/trace.zst" "" -- "$PY" "$TPI" "${TARGS[@]}" --report "$W/report.json"
    expect_rc 0; expect_same_stdout "$W/plain.out"
    echo "torch.profiler under gmemprof: $(tr -d '\n' <"$W/report.json" 2>/dev/null)"
    if grep -q 'MULTIPLE_SUBSCRIBERS\|CUPTI initialization failed' "$W/stderr"; then
        kineto="Kineto's CUPTI subscription was refused ($(grep -m1 -o 'CUPTI_ERROR_[A-Z_]*' "$W/stderr" || echo 'CUPTI initialization failed'))"
    else
        kineto="no CUPTI refusal from Kineto on stderr"
    fi
    nconf=$(grep -c '^gmemprof: another CUPTI client' "$W/stderr")
    # One line for tests/gpu/run_all.sh's summary: who won the subscription.
    echo "torch_profiler_inside: $kineto; gmemprof conflict lines: $nconf; torch.profiler got: $(tr -d '\n ' <"$W/report.json" 2>/dev/null || echo '(no report)')" |
        tee "$W/outcome.txt"
    if [ "$nconf" -gt 0 ]; then
        # gmemprof was refused: the documented outcome of row 16
        if [ "$nconf" -eq 1 ]; then pass "gmemprof named the conflict in one line: $(grep -m1 '^gmemprof: another' "$W/stderr" | head -c 200)"
        else fail "$nconf 'another CUPTI client' lines, expected one"; fi
        [ -s "$W/trace.zst" ] && fail "gmemprof says it is off but a trace was written"
    else
        # gmemprof subscribed: its trace must be complete and read back cleanly
        check "$W/trace.zst" --expect windows=1 --expect trailer=1 --expect dropped=0 --expect step_source=nvtx \
            --expect kernels_min=$((3 * (WARM + PROF + AFTER)))
        timeout -k 5 60 "$BIN/gmem-analyze" "$W/trace.zst" --by step --format csv --top 0 \
            >"$W/by_step.csv" 2>"$W/analyze.stderr"
        arc=$?
        if [ "$arc" -ne 0 ]; then fail "gmem-analyze exit $arc: $(head -c 300 "$W/analyze.stderr")"
        elif grep -qi 'truncated\|no trailer\|warning' "$W/analyze.stderr"; then fail "gmem-analyze warns: $(head -c 300 "$W/analyze.stderr")"
        else pass "gmem-analyze reads the trace back: exit 0, no warning"; fi
        # Every step of every phase has kernels: steps 0..WARM+PROF+AFTER-1
        # (step k ends at the k+1-th mark("step")); the last AFTER of them run
        # after torch.profiler stopped.
        missing=$("$PY" - "$W/by_step.csv" $((WARM + PROF + AFTER)) <<'PYEOF'
import csv, sys
rows = [l for l in open(sys.argv[1]) if not l.startswith("#")]
need = int(sys.argv[2])
k = {}
for r in csv.DictReader(rows):
    try:
        k[int(r["step"])] = int(r["kernels"] or 0)
    except (KeyError, ValueError):
        pass
print(" ".join(str(s) for s in range(need) if k.get(s, 0) <= 0) or "none")
PYEOF
)
        if [ "$missing" = none ]; then pass "kernels recorded in every step, the $AFTER after torch.profiler included"
        else fail "steps without kernels (of 0..$((WARM + PROF + AFTER - 1))): ${missing:-could not read $W/by_step.csv}"; fi
    fi
    ;;
torch_ops_gpt | torch_ops_cnn | torch_ops_accum | torch_ops_twoopt | torch_ops_compile)
    # Op ranges and steps from PyTorch itself (the bridge's RecordFunction
    # callbacks) on a script with no NVTX line and no emit_nvtx: under
    # wait=1,warmup=1,active=2 exactly 2 active steps made by optimizer
    # steps, with a baseline, op ranges in the window, stdout and exit status
    # unchanged; _accum: 2 passes per optimizer step, _twoopt: SGD and AdamW
    # stepped one after the other, both one step per iteration.
    need_gpu; need_torch; need_built "$BIN/gmem-analyze"
    [ -e "$GM_BUILD/lib/libgmemprof_torch.so" ] || skip "the PyTorch bridge is not built (cmake -DGMEMPROF_TORCH=ON)"
    TO="$GM_SRC/tests/gpu/torch_ops.py"
    oargs=(--steps 6)
    case $name in
    torch_ops_cnn) oargs+=(--model cnn) ;;
    torch_ops_accum) oargs+=(--accum 2) ;;
    torch_ops_twoopt) oargs+=(--two-opt) ;;
    torch_ops_compile) oargs+=(--model cnn --compile) ;; # what PyTorch records of compiled code: outcome.txt
    esac
    plain "$W/plain.out" -- "$PY" "$TO" "${oargs[@]}"
    [ "$PLAIN_RC" -eq 0 ] || fail "unprofiled run exited $PLAIN_RC"
    prof "$W/trace.zst" "wait=1,warmup=1,active=2" -- "$PY" "$TO" "${oargs[@]}"
    expect_rc 0; expect_same_stdout "$W/plain.out"
    if grep -q ', 6 steps by optimizer, ' "$W/stderr"; then pass "the launcher says: 6 steps by optimizer"
    else fail "the launcher's summary does not say '6 steps by optimizer': $(grep -m1 'gmemprof:' "$W/stderr" | head -c 300)"; fi
    check "$W/trace.zst" --expect trailer=1 --expect dropped=0 --expect windows=1 --expect active_steps=2 \
        --expect first_active_step=2 --expect step_source=optimizer --expect baseline_count_min=1 \
        --expect ranges_min=100
    timeout -k 5 120 "$BIN/gmem-analyze" "$W/trace.zst" --by range --sort mem --top 10 >"$W/by_range.txt" 2>"$W/analyze.err" ||
        fail "gmem-analyze --by range failed: $(head -c 300 "$W/analyze.err")"
    if grep -q '^aten::' "$W/by_range.txt"; then pass "--by range ranks PyTorch ops: $(grep -m1 '^aten::' "$W/by_range.txt" | tr -s ' ' | head -c 120)"
    elif [ "$name" != torch_ops_compile ]; then fail "--by range shows no aten:: op (files in $W)"; fi
    if [ "$name" = torch_ops_compile ]; then
        { echo "torch_ops_compile: the top ranges by self memory of a torch.compile'd CNN:"
          sed -n '/ranked by self memory/,/^$/p' "$W/by_range.txt" | head -12; } | tee "$W/outcome.txt"
    fi
    ;;
torch_modules_gpt | torch_modules_cnn | torch_modules_ddp | torch_modules_compile | torch_modules_midstep)
    # nn.Module ranges and source lines from the bridge on an unmodified
    # script (tests/gpu/torch_modules.py): stdout and exit status unchanged;
    # every module path the model has opens a range, backward ranges exist;
    # the largest tensor's line is the model's line that made it (eager).
    # The script's facts (facts.json: per-module parameter bytes, each
    # Linear's output bytes, that line) stay beside the trace for the
    # analyzer's --by module / --by line checks; trace_modules.txt holds what
    # the trace says.
    need_gpu; need_torch; need_built "$BIN/trace_modules"
    [ -e "$GM_BUILD/lib/libgmemprof_torch.so" ] || skip "the PyTorch bridge is not built (cmake -DGMEMPROF_TORCH=ON)"
    # its physical path: Python names a frame's file as the command line gave it
    TM="$(cd "$GM_SRC/tests/gpu" && pwd -P)/torch_modules.py"
    margs=(--steps 3)
    msched=whole
    case $name in
    torch_modules_gpt) margs+=(--model gpt) ;;
    # a window that opens at an optimizer step: the module hooks go in at
    # that step, before the next forward, and the parameters (made before
    # the window, in its baseline) are named at that forward
    torch_modules_cnn) margs+=(--model cnn); msched="wait=1,warmup=1,active=1" ;;
    # steps from an NVTX marker inside the forward: the window opens there,
    # the hooks go in at the next op, and the blocks after the marker run
    # inside the GPT's call that no pre-hook saw (orphans, no root of their own)
    torch_modules_midstep) margs+=(--model gpt --mark-mid-forward); msched="wait=1,warmup=1,active=1" ;;
    torch_modules_ddp) margs+=(--model gpt --ddp) ;;
    torch_modules_compile) margs+=(--model cnn --compile) ;;
    esac
    dyn=()
    [ "$name" = torch_modules_compile ] && dyn=(--dynamo-stats "$W/dynamo-plain.json")
    plain "$W/plain.out" -- "$PY" "$TM" "${margs[@]}" "${dyn[@]}"
    [ "$PLAIN_RC" -eq 0 ] || fail "unprofiled run exited $PLAIN_RC"
    [ "$name" = torch_modules_compile ] && dyn=(--dynamo-stats "$W/dynamo-prof.json")
    prof "$W/trace.zst" "$msched" -- "$PY" "$TM" "${margs[@]}" --facts "$W/facts.json" "${dyn[@]}"
    expect_rc 0; expect_same_stdout "$W/plain.out"
    lbytes=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["largest_bytes"])' "$W/facts.json")
    "$BIN/trace_modules" "$W/trace.zst" "$lbytes" >"$W/trace_modules.txt" 2>"$W/trace_modules.err" ||
        fail "trace_modules failed: $(head -c 300 "$W/trace_modules.err")"
    missing=$("$PY" - "$W/facts.json" "$W/trace_modules.txt" <<'PYEOF'
import json, sys
f = json.load(open(sys.argv[1]))
seen = {l.split(" ", 1)[1].strip() for l in open(sys.argv[2]) if l.startswith("module ")}
# a container that is never called (ModuleList) opens no range: its children do
inner = lambda p: any(q.startswith(p + ".") for q in seen)
print(" ".join(p for p in f["paths"] if p not in seen and not inner(p)) or "none")
PYEOF
)
    if [ "$name" = torch_modules_compile ]; then
        pass "compiled: module paths not seen: ${missing:0:200}"
        # the module wrapper must not cut the compiled model into more graphs
        dstat=$("$PY" -c 'import json,sys; p,q=(json.load(open(f)) for f in sys.argv[1:3]); print(p["graph_breaks"], p["unique_graphs"], q["graph_breaks"], q["unique_graphs"], "; ".join(q["reasons"]))' \
            "$W/dynamo-plain.json" "$W/dynamo-prof.json" 2>"$W/dynamo.err")
        read -r pb pg qb qg why <<<"$dstat"
        if [ -z "$dstat" ]; then fail "dynamo: no graph counts to compare (a run wrote none: $(tail -n 1 "$W/dynamo.err"))"
        elif [ "${qb:-x}" = "$pb" ] && [ "${qg:-x}" = "$pg" ]; then pass "dynamo: $qb graph breaks, $qg graphs, as unprofiled"
        else fail "dynamo: graph breaks and graphs unprofiled $pb $pg, profiled ${qb:-?} ${qg:-?}: ${why:0:400}"; fi
    elif [ "$missing" = none ]; then pass "every module path of the model has a range"
    else fail "module paths without a range: ${missing:0:300}"; fi
    if [ "$name" = torch_modules_midstep ]; then
        roots=$(sed -n 's/^module \([^.]*\).*/\1/p' "$W/trace_modules.txt" | sort -u | tr '\n' ' ')
        if [ "$roots" = "GPT " ]; then pass "a window opened inside a forward: every module range is under GPT"
        else fail "module roots in the trace: ${roots:0:200}(GPT alone expected)"; fi
    fi
    if grep -q '^module_bwd ' "$W/trace_modules.txt"; then pass "backward module ranges: $(grep -c '^module_bwd ' "$W/trace_modules.txt") paths"
    else fail "no backward module range"; fi
    if [ "$name" = torch_modules_gpt ] || [ "$name" = torch_modules_cnn ] || [ "$name" = torch_modules_midstep ]; then
        want=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["largest_line"])' "$W/facts.json")
        got=$(sed -n 's/^requested [0-9]* //p' "$W/trace_modules.txt")
        if [ "$got" = "$want" ]; then pass "the largest activation's line: $got"
        else fail "the largest activation ($lbytes bytes) has line '$got', the model's is '$want'"; fi
    fi
    # the analyzer's views of the same trace: the roots of --by module hold every
    # tensor byte (--by category counts them apart), each nn.Linear's own allocations
    # are whole outputs of it, each module's own parameters and buffers (made by
    # .cuda() before any module ran) are its self_params_bytes exactly, and
    # --by line holds the largest activation's line
    GA=(timeout -k 5 120 "$BIN/gmem-analyze" "$W/trace.zst" --top 0 -f csv)
    if "${GA[@]}" --by module >"$W/modules.csv" 2>"$W/modules.err" &&
        "${GA[@]}" --by category >"$W/categories.csv" 2>>"$W/modules.err" &&
        "${GA[@]}" --by line >"$W/lines.csv" 2>>"$W/modules.err"; then
        if verdict=$("$PY" - "$W/facts.json" "$W/modules.csv" "$W/categories.csv" "$W/lines.csv" "$name" <<'PYEOF'
import csv, json, sys
f = json.load(open(sys.argv[1]))
rd = lambda p: list(csv.DictReader(l for l in open(p) if not l.startswith("#")))
mods, cats, lines, name = rd(sys.argv[2]), rd(sys.argv[3]), rd(sys.argv[4]), sys.argv[5]
blk = lambda n: max(512, (n + 511) // 512 * 512)
bad, say = [], []
roots = sum(int(r["total_alloc_bytes"]) for r in mods if r["depth"] in ("1", ""))
tensors = sum(int(r["alloc_bytes"] or 0) for r in cats if r["device"] == "0" and r["alloc_bytes"])
say.append("roots hold %d bytes allocated, the categories %d" % (roots, tensors))
if roots != tensors:
    bad.append(say[-1])
if name != "torch_modules_compile":
    # each call's output at least (cuBLAS may add a workspace inside the op)
    by = {r["module"]: r for r in mods}
    for path, out in sorted(f["linear_out"].items()):
        r = by.get(path)
        got, calls = (int(r["self_alloc_bytes"]), int(r["calls"] or 0)) if r else (0, 0)
        if calls == 0 or got < calls * blk(out):
            bad.append("%s allocated %d bytes itself in %d calls, less than its outputs of %d" % (path, got, calls, blk(out)))
    say.append("%d Linears each own their outputs" % len(f["linear_out"]))
    # the parameters and buffers each module holds, exactly (forward rows)
    wrong = ["%s %s != %d" % (p, by[p]["self_params_bytes"] if p in by else "no row", want)
             for p, want in sorted(f["own"].items())
             if (int(by[p]["self_params_bytes"]) if p in by else 0) != want]
    if wrong:
        bad.append("self_params_bytes differ from the model's: " + ", ".join(wrong[:6]))
    root = by.get(f["root"])
    total = sum(f["own"].values())
    if not root or int(root["total_params_bytes"]) != total:
        bad.append("the root's total_params_bytes %s, the model's parameters and buffers %d"
                   % (root["total_params_bytes"] if root else "no row", total))
    else:
        say.append("%d modules hold their parameters and buffers exactly (%d bytes)"
                   % (sum(1 for v in f["own"].values() if v), total))
if name in ("torch_modules_gpt", "torch_modules_cnn", "torch_modules_midstep"):
    row = next((r for r in lines if r["line"] == f["largest_line"]), None)
    if not row or int(row["alloc_bytes"]) < f["largest_bytes"]:
        bad.append("--by line has no row of %d bytes for %s" % (f["largest_bytes"], f["largest_line"]))
    else:
        say.append("--by line: %s %s bytes" % (row["line"], row["alloc_bytes"]))
print("; ".join(bad) if bad else ", ".join(say))
sys.exit(1 if bad else 0)
PYEOF
        ); then pass "$verdict"; else fail "$verdict"; fi
    else
        fail "gmem-analyze --by module/category/line failed: $(head -c 300 "$W/modules.err")"
    fi
    ;;
torch_bridge | torch_bridge_expandable | torch_bridge_sched | torch_bridge_graph)
    # The PyTorch bridge (libgmemprof_torch.so) under the launcher, on a
    # training loop with no gmemprof code: gmem-analyze's allocated and
    # reserved bytes equal torch.cuda's counters exactly, at the peaks and at
    # every tag (tests/gpu/torch_bridge_check.py). _expandable: with
    # expandable_segments:True; _sched: a window whose baseline holds the
    # blocks live before it; _graph: a CUDA graph's capture and replays (what
    # the tracker reports goes into outcome.txt).
    need_gpu; need_torch; need_built "$BIN/gmem-analyze" "$BIN/gmt-dump"
    [ -e "$GM_BUILD/lib/libgmemprof_torch.so" ] || skip "the PyTorch bridge is not built (cmake -DGMEMPROF_TORCH=ON)"
    TB="$GM_SRC/tests/gpu/torch_bridge.py"
    E=(env) sched="" cargs=() targs=()
    case $name in
    torch_bridge_expandable) E=(env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) ;;
    torch_bridge_sched) sched="wait=2,warmup=1,active=3" cargs=(--sched) ;;
    torch_bridge_graph) targs=(--graph) cargs=(--dump "$W/dump.txt" --outcome "$W/outcome.txt") ;;
    esac
    plain "$W/plain.out" -- "${E[@]}" "$PY" "$TB" --counters "$W/plain.counters.json" ${targs[@]+"${targs[@]}"}
    [ "$PLAIN_RC" -eq 0 ] || fail "unprofiled run exited $PLAIN_RC"
    prof "$W/trace.zst" "$sched" -- "${E[@]}" "$PY" "$TB" --counters "$W/counters.json" ${targs[@]+"${targs[@]}"}
    expect_rc 0; expect_same_stdout "$W/plain.out"
    # the bridge's one line when it is not used (profiler/sources/torch.c); that it
    # was used, the trace's blocks say (torch_bridge_check.py)
    nb='^gmemprof: \(PyTorch is in this process\|the PyTorch bridge\|PyTorch.s allocator cannot\)'
    if grep -q "$nb" "$W/stderr"; then
        fail "the bridge was not used: $(grep -m1 "$nb" "$W/stderr" | head -c 300)"
    fi
    check "$W/trace.zst" --expect trailer=1 --expect dropped=0
    timeout -k 5 120 "$BIN/gmem-analyze" "$W/trace.zst" --format csv --top 0 >"$W/summary.csv" 2>"$W/analyze.err" &&
        timeout -k 5 120 "$BIN/gmem-analyze" "$W/trace.zst" --by tag --format csv --top 0 >"$W/tags.csv" 2>>"$W/analyze.err" ||
        fail "gmem-analyze failed: $(head -c 300 "$W/analyze.err")"
    [ "$name" = torch_bridge_graph ] && { timeout -k 5 120 "$BIN/gmt-dump" "$W/trace.zst" >"$W/dump.txt" 2>/dev/null || true; }
    if "$PY" "$GM_SRC/tests/gpu/torch_bridge_check.py" "$W/counters.json" "$W/summary.csv" "$W/tags.csv" \
        ${cargs[@]+"${cargs[@]}"} >"$W/bridge_check.txt" 2>&1; then
        pass "$(tail -1 "$W/bridge_check.txt")"
    else
        grep -v '^ok ' "$W/bridge_check.txt" | head -20
        fail "gmemprof's numbers differ from torch.cuda's (files in $W)"
    fi
    [ -s "$W/outcome.txt" ] && cat "$W/outcome.txt"
    ;;
oom_cuda)
    # The flight recorder on a CUDA C loop that allocates until it fails
    # (samples/oom.c): one dump, naming the request, its step and the live
    # set the program held; stdout and the exit status are the program's.
    need_gpu; need_built "$S/gm_oom" "$BIN/gmt-dump"
    plain "$W/plain.out" -- "$S/gm_oom" --json "$W/plain.json" --say "oom done" --exit 3
    [ "$PLAIN_RC" -eq 3 ] || fail "unprofiled run exited $PLAIN_RC"
    timeout -k 10 "$T" "$LAUNCH" --on-oom -o "$W/dump.zst" -- "$S/gm_oom" --json "$W/expect.json" \
        --say "oom done" --exit 3 >"$W/stdout" 2>"$W/stderr"
    RC=$?
    expect_rc 3; expect_same_stdout "$W/plain.out"
    grep -q '^gmemprof: the command ran out of memory: ' "$W/stderr" &&
        pass "the launcher names the failure" || fail "no launcher line: $(tail -3 "$W/stderr")"
    check "$W/dump.zst" --expect trailer=1
    oom_check cuda "$W/expect.json"
    timeout -k 5 60 "$BIN/gmem-analyze" "$W/dump.zst" >"$W/report.txt" 2>&1
    head -1 "$W/report.txt" | grep -q '^Out of memory, dump 1: the CUDA call cuMemAlloc' &&
        pass "the report starts with the failure" || fail "report: $(head -2 "$W/report.txt")"
    ;;
torch_oom)
    # The flight recorder on a PyTorch loop whose batch doubles until
    # torch.OutOfMemoryError (tests/gpu/torch_oom.py): the dump names the op
    # and the request and free memory that PyTorch's own message prints.
    need_gpu; need_torch; need_built "$BIN/gmt-dump" "$BIN/gmem-analyze"
    [ -e "$GM_BUILD/lib/libgmemprof_torch.so" ] || skip "the PyTorch bridge is not built (cmake -DGMEMPROF_TORCH=ON)"
    TO="$GM_SRC/tests/gpu/torch_oom.py"
    plain "$W/plain.out" -- "$PY" "$TO" --error "$W/plain.error.json"
    [ "$PLAIN_RC" -eq 0 ] || fail "unprofiled run exited $PLAIN_RC"
    timeout -k 10 "$T" "$LAUNCH" --on-oom -o "$W/dump.zst" -- "$PY" "$TO" --error "$W/error.json" \
        >"$W/stdout" 2>"$W/stderr"
    RC=$?
    expect_rc 0; expect_same_stdout "$W/plain.out"
    check "$W/dump.zst" --expect trailer=1
    oom_check torch "$W/error.json"
    timeout -k 5 60 "$BIN/gmem-analyze" "$W/dump.zst" >"$W/report.txt" 2>&1 ||
        fail "gmem-analyze failed: $(head -c 300 "$W/report.txt")"
    ;;
torch_fit | torch_fit_batch)
    # --fit on an unmodified GPT-like loop with naive attention (tests/gpu/torch_fit.py):
    # three sequence lengths predict the allocated peak at the fourth, or two batch sizes
    # the third, within 5% of what PyTorch measured there (max_memory_allocated).
    need_gpu; need_torch; need_built "$BIN/gmem-analyze"
    [ -e "$GM_BUILD/lib/libgmemprof_torch.so" ] || skip "the PyTorch bridge is not built (cmake -DGMEMPROF_TORCH=ON)"
    TF="$GM_SRC/tests/gpu/torch_fit.py"
    if [ "$name" = torch_fit ]; then
        dim=seq fixed="--batch 4" sizes="512 1024 2048" at=4096
    else
        dim=batch fixed="--seq 1024" sizes="2 4" at=8
    fi
    traces=() list=""
    for s in $sizes $at; do
        # shellcheck disable=SC2086
        timeout -k 10 "$T" "$LAUNCH" -q -o "$W/$dim$s.zst" -- "$PY" "$TF" gpt --$dim "$s" $fixed \
            --out "$W/$dim$s.json" >"$W/$dim$s.stdout" 2>"$W/$dim$s.stderr" ||
            fail "$dim $s: exit $? ($(tail -c 300 "$W/$dim$s.stderr"))"
        if [ "$s" != "$at" ]; then
            traces+=("$W/$dim$s.zst")
            list="$list${list:+,}$s"
        fi
    done
    timeout -k 5 120 "$BIN/gmem-analyze" "${traces[@]}" --fit "$list" --at "$at" -f json >"$W/fit.json" 2>"$W/fit.err" ||
        fail "gmem-analyze --fit failed: $(head -c 300 "$W/fit.err")"
    timeout -k 5 120 "$BIN/gmem-analyze" "${traces[@]}" --fit "$list" --at "$at" >"$W/fit.txt" 2>&1
    if verdict=$("$PY" - "$W/fit.json" "$W/$dim$at.json" <<'PYEOF'
import json, sys
fit = json.load(open(sys.argv[1]))["fit"]
truth = json.load(open(sys.argv[2]))["max_allocated"]
pred = fit["peak"]["predicted_bytes"]
err = (pred - truth) / truth
print("%s law, predicted %d, measured %d (%+.2f%%)" % (fit["peak"]["law"], pred, truth, 100 * err))
sys.exit(0 if abs(err) <= 0.05 else 1)
PYEOF
    ); then
        pass "$dim $list -> $at: $verdict"
    else
        fail "$dim $list -> $at: $verdict"
    fi
    ;;
torch_frag)
    # A fragmentation failure on purpose (torch_fit.py frag): the dump's first cause is
    # fragmentation with expandable_segments:True to try, and the same run with that
    # setting does not fail.
    need_gpu; need_torch; need_built "$BIN/gmem-analyze"
    [ -e "$GM_BUILD/lib/libgmemprof_torch.so" ] || skip "the PyTorch bridge is not built (cmake -DGMEMPROF_TORCH=ON)"
    TF="$GM_SRC/tests/gpu/torch_fit.py"
    timeout -k 10 "$T" env -u PYTORCH_CUDA_ALLOC_CONF -u PYTORCH_ALLOC_CONF "$LAUNCH" --on-oom -o "$W/dump.zst" -- \
        "$PY" "$TF" frag --out "$W/frag.json" >"$W/stdout" 2>"$W/stderr"
    RC=$?
    expect_rc 0
    grep -q '"oom": true' "$W/frag.json" || fail "the default allocator did not fail: $(head -c 300 "$W/frag.json")"
    timeout -k 5 60 "$BIN/gmem-analyze" "$W/dump.zst" >"$W/report.txt" 2>&1 ||
        fail "gmem-analyze failed: $(head -c 300 "$W/report.txt")"
    if grep -q '^    1\. fragmentation:' "$W/report.txt" &&
        grep -q 'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (not set in this run)' "$W/report.txt"; then
        pass "the dump names fragmentation first, and expandable_segments:True"
    else
        fail "no fragmentation first: $(grep -A6 'why, most' "$W/report.txt" | head -c 600)"
    fi
    timeout -k 10 "$T" env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "$LAUNCH" --on-oom -o "$W/again.zst" -- \
        "$PY" "$TF" frag --out "$W/again.json" >"$W/again.stdout" 2>"$W/again.stderr"
    if grep -q '"oom": false' "$W/again.json"; then
        pass "with expandable_segments:True the same request is served"
    else
        fail "with expandable_segments:True it still failed: $(head -c 300 "$W/again.json")"
    fi
    ;;
torch_categories)
    # What kind of memory it is, on unmodified loops (tests/gpu/torch_categories.py): a
    # GPT-like model with AdamW and a CNN with SGD momentum. The parameters' (and buffers')
    # blocks at the peak, the optimizer state's blocks and each step's gradients equal what
    # PyTorch counts for them, exactly (the interpreter's exit frees the model and the
    # optimizer's state: still parameters and state); nothing is reported leaked.
    need_gpu; need_torch; need_built "$BIN/gmem-analyze"
    [ -e "$GM_BUILD/lib/libgmemprof_torch.so" ] || skip "the PyTorch bridge is not built (cmake -DGMEMPROF_TORCH=ON)"
    TC="$GM_SRC/tests/gpu/torch_categories.py"
    for m in gpt cnn; do
        timeout -k 10 "$T" "$LAUNCH" -q -o "$W/$m.zst" -- "$PY" "$TC" "$m" --out "$W/$m.json" \
            >"$W/$m.stdout" 2>"$W/$m.stderr"
        RC=$?
        expect_rc 0
        [ "$(cat "$W/$m.stdout")" = "torch_categories done" ] || fail "$m: stdout changed: $(head -c 200 "$W/$m.stdout")"
        timeout -k 5 120 "$BIN/gmem-analyze" "$W/$m.zst" --by category -f csv >"$W/$m.csv" 2>"$W/$m.err" ||
            { fail "$m: gmem-analyze --by category failed: $(head -c 300 "$W/$m.err")"; continue; }
        timeout -k 5 120 "$BIN/gmem-analyze" "$W/$m.zst" >"$W/$m.txt" 2>&1
        if verdict=$("$PY" - "$W/$m.csv" "$W/$m.json" "$W/$m.txt" <<'PYEOF'
import csv, json, re, sys
rows = {r["category"]: r for r in csv.DictReader(open(sys.argv[1])) if r["device"] == "0"}
f = json.load(open(sys.argv[2]))
text = open(sys.argv[3]).read()
num = lambda r, k: int(r[k] or 0)
bad, say = [], []
def same(what, got, want):
    say.append("%s %d (PyTorch %d)" % (what, got, want))
    if got != want:
        bad.append("%s: %d, PyTorch counts %d" % (what, got, want))
same("parameter at the peak", num(rows["parameter"], "peak_bytes"), f["parameter"]["blocks"])
same("optimizer state allocated", num(rows["optimizer state"], "alloc_bytes"), f["optimizer_state"]["blocks"])
same("gradients allocated", num(rows["gradient"], "alloc_bytes"), f["steps"] * f["gradient_per_step"]["blocks"])
m = re.search(r"^Leaked +(.*)$", text, re.M)
if m and not m.group(1).startswith("0 B"):
    bad.append("a leak reported: Leaked " + m.group(1))
print("; ".join(bad) if bad else ", ".join(say))
sys.exit(1 if bad else 0)
PYEOF
        ); then
            pass "$m: $verdict"
        else
            fail "$m: $verdict"
        fi
    done
    ;;
*)
    echo "gpu_test.sh: unknown test $name" >&2
    exit 2
    ;;
esac
finish
