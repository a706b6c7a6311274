#!/usr/bin/env bash
# The benchmark in one command, for the device machine:
#
#     bash bench/run_bench.sh [--quick] [--rounds N] [--workloads small,medium[,hf]]
#                             [--budget SECONDS] [--configs a,b,...] [--steps N] [--fake]
#
# Configurations, each run in its own process, interleaved A B C ... per
# workload in every round (bench/workload.py says what each mode does):
#   none                 unprofiled
#   gmemprof-wait        gmemprof loaded, every step in its wait phase (no window)
#   gmemprof-active      gmemprof with its window over exactly the timed steps
#                        (the default kernel mode, launch: kernels from their
#                        launches, no CUPTI kernel activity)
#   gmemprof-gpu         the same window with --kernels gpu (CUPTI kernel
#                        activity: GPU times, registers, shared memory)
#   gmemprof-nobridge    gmemprof-active with GMEMPROF_TORCH=0: CUPTI alone,
#                        without the PyTorch bridge (which gmemprof-active
#                        loads when the build has it; not in the default list:
#                        bench/bridge_bench.sh runs it)
#   gmemprof-noops       gmemprof-active with GMEMPROF_TORCH_OPS=0: the bridge's
#                        tensors without its op ranges (bench/bridge_bench.sh)
#   gmemprof-stacks      gmemprof-active with --stacks python: each tensor's whole
#                        Python stack besides its line
#   gmemprof-nolines     gmemprof-active with --stacks off: no source line
#   gmemprof-nomodules   gmemprof-active with GMEMPROF_TORCH_MODULES=0: no module ranges
#   gmemprof-emitnvtx    gmemprof-active on a loop under emit_nvtx(): op ranges
#                        from NVTX instead of the bridge (bench/bridge_bench.sh)
#   torch-profiler-full  torch.profiler CPU+CUDA, profile_memory, record_shapes
#   torch-profiler-cuda  torch.profiler CUDA only, profile_memory
#   memory-history       torch.cuda.memory._record_memory_history()
#   memory-history-python  the same with stacks="python"
#   gmemprof-oom         the flight recorder (--on-oom): the whole run in its
#                        in-memory ring, nothing written (no failure); not in
#                        the default list: bench/oom_bench.sh runs it
# Round 1 also measures trace -> ranked table (gmem-analyze vs torch.profiler's
# key_averages().table() + export_chrome_trace) and trace sizes.
#
# Budget: the whole run must stay under 9 minutes on an H200. Each process
# costs ~5-8 s (mostly Python and CUDA start-up), so a round of 2 workloads x
# 6 configurations takes ~1.5 min (round 1 ~2.5 min: it analyses). Rounds run
# until --rounds (default 5, --quick 2) or until the next round would pass
# --budget seconds (default 470) counted from the start; the script prints
# its plan, and says when the budget cut the rounds short.
#
# Output ($OUT, default ./bench-out): bench.md (the table), bench.json (every
# figure and every run), runs.jsonl, logs.tar.gz. The table is printed last.
# --fake runs workload.py --fake (no torch, no GPU, no profiler): tests this
# script and bench/summarize.py anywhere.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 1
OUT=${OUT:-$ROOT/bench-out}
ROUNDS=5
WORKLOADS="small medium"
BUDGET=470
FAKE=0
WARMUP=10
STEPS=30
CONFIGS=(none gmemprof-wait gmemprof-active gmemprof-gpu torch-profiler-full torch-profiler-cuda memory-history)
CMDLINE="bash bench/run_bench.sh $*"

while [ $# -gt 0 ]; do
    case $1 in
    --quick) ROUNDS=2 ;;
    --rounds) ROUNDS=$2; shift ;;
    --workloads) WORKLOADS=${2//,/ }; shift ;;
    --budget) BUDGET=$2; shift ;;
    --steps) STEPS=$2; shift ;;
    --configs) IFS=, read -r -a CONFIGS <<<"$2"; shift ;;
    --fake) FAKE=1 ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "run_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

T0=$(date +%s)
WORK=$BUILD/bench-work
rm -rf "$WORK"
mkdir -p "$WORK/logs" "$OUT"
RUNS=$WORK/runs.jsonl
: >"$RUNS"
LAUNCH=$BUILD/bin/gmemprof
ANALYZE=$BUILD/bin/gmem-analyze
CT=$BUILD/bin/check_trace
WL=$ROOT/bench/workload.py
SUM=$ROOT/bench/summarize.py
say() { echo "[bench +$(($(date +%s) - T0))s] $*"; }

if [ "$FAKE" = 0 ]; then
    say "build (incremental)"
    bench_build "$WORK/logs/build.log" run_bench.sh
fi

nw=$(echo "$WORKLOADS" | wc -w)
say "plan: up to $ROUNDS rounds x $nw workloads x ${#CONFIGS[@]} configurations = $((ROUNDS * nw * ${#CONFIGS[@]})) processes; $WARMUP warm-up + $STEPS timed steps each; budget ${BUDGET}s for everything (rounds stop early rather than pass it)"

# run_one WORKLOAD CONFIG ROUND
run_one() {
    local w=$1 c=$2 r=$3 trace="" s e rc mode=none
    local wl=(--size "$w" --warmup "$WARMUP" --steps "$STEPS" --config "$c" --round "$r" --trace-dir "$WORK")
    [ "$r" = 1 ] && wl+=(--analyze)
    [ "$c" = gmemprof-emitnvtx ] && wl+=(--emit-nvtx)
    [ "$FAKE" = 1 ] && wl+=(--fake)
    local pre=()
    case $c in
    none) ;;
    gmemprof-wait | gmemprof-active | gmemprof-gpu | gmemprof-nobridge | gmemprof-noops | gmemprof-emitnvtx | gmemprof-stacks | \
        gmemprof-nolines | gmemprof-nomodules)
        if [ "$FAKE" = 0 ]; then
            trace=$WORK/$c-$w-$r.zst
            local sched="wait=100000,warmup=1,active=1,repeat=1" # never leaves the wait phase
            local kmode=launch # the default
            [ "$c" != gmemprof-wait ] && sched="wait=$((WARMUP - 1)),warmup=1,active=$STEPS,repeat=1"
            [ "$c" = gmemprof-gpu ] && kmode=gpu
            pre=("$LAUNCH" -q -o "$trace" --schedule "$sched" --kernels "$kmode" --)
            [ "$c" = gmemprof-nobridge ] && pre=(env GMEMPROF_TORCH=0 "${pre[@]}")
            [ "$c" = gmemprof-noops ] && pre=(env GMEMPROF_TORCH_OPS=0 "${pre[@]}")
            [ "$c" = gmemprof-nolines ] && pre=(env GMEMPROF_STACKS=off "${pre[@]}")
            [ "$c" = gmemprof-nomodules ] && pre=(env GMEMPROF_TORCH_MODULES=0 "${pre[@]}")
            [ "$c" = gmemprof-stacks ] && pre=(env GMEMPROF_STACKS=python "${pre[@]}")
        fi
        ;;
    gmemprof-oom)
        # no trace: nothing fails, so the recorder writes nothing
        [ "$FAKE" = 0 ] && pre=("$LAUNCH" -q --on-oom -o "$WORK/$c-$w-$r.zst" --)
        ;;
    torch-profiler-full | torch-profiler-cuda | memory-history | memory-history-python) mode=$c ;;
    *) echo "unknown configuration $c" >&2; return ;;
    esac
    s=$(date +%s%N)
    timeout -k 10 150 "${clean_env[@]}" "${pre[@]}" "$PY" "$WL" --mode "$mode" "${wl[@]}" >"$WORK/line.txt" 2>"$WORK/logs/$w-$c-$r.stderr"
    rc=$?
    e=$(date +%s%N)
    local wall
    wall=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    local extra=()
    [ -n "$trace" ] && extra=(--trace "$trace" --check-trace "$CT" --analyzer "$ANALYZE")
    "$PY" "$SUM" merge --line-file "$WORK/line.txt" --config "$c" --round "$r" --workload "$w" --rc "$rc" \
        --wall "$wall" "${extra[@]}" >>"$RUNS"
    [ -n "$trace" ] && [ "$r" != 1 ] && rm -f "$trace"
    printf '  %-7s %-20s round %d: exit %d, %s s, median %s ms\n' "$w" "$c" "$r" "$rc" "$wall" \
        "$(tail -1 "$RUNS" | "$PY" -c 'import json,sys; v=json.loads(sys.stdin.read()).get("median_ms"); print("%.3f" % v if v else "n/a")')"
}

done_rounds=0
for ((r = 1; r <= ROUNDS; r++)); do
    rs=$(date +%s)
    say "round $r"
    for w in $WORKLOADS; do
        for c in "${CONFIGS[@]}"; do
            run_one "$w" "$c" "$r"
        done
    done
    done_rounds=$r
    took=$(($(date +%s) - rs))
    elapsed=$(($(date +%s) - T0))
    say "round $r took ${took}s (elapsed ${elapsed}s of ${BUDGET}s)"
    if [ "$r" -lt "$ROUNDS" ] && [ $((elapsed + took + 15)) -gt "$BUDGET" ]; then
        say "BUDGET: stopping after $r rounds (another would end near $((elapsed + took))s)"
        break
    fi
done

{
    printf '{"date": "%s", ' "$(date -u +%Y-%m-%d)"
    printf '"gpu": "%s", ' "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
    printf '"driver": "%s", ' "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
    printf '"torch": "%s", ' "$(timeout 60 "$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
    printf '"command": "%s", "rounds": %d, "rounds_planned": %d, "warmup": %d, "steps": %d, "fake": %d}\n' \
        "$CMDLINE" "$done_rounds" "$ROUNDS" "$WARMUP" "$STEPS" "$FAKE"
} >"$WORK/meta.json"

cp "$RUNS" "$OUT/runs.jsonl"
tar -C "$WORK" --exclude='*.zst' -czf "$OUT/logs.tar.gz" logs meta.json 2>/dev/null
say "done in $(($(date +%s) - T0)) s ($done_rounds rounds); files in $OUT"
echo
"$PY" "$SUM" report "$RUNS" --meta "$WORK/meta.json" --md "$OUT/bench.md" --json "$OUT/bench.json"
