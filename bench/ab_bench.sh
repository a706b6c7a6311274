#!/usr/bin/env bash
# The window's cost measured inside one process (in-process A/B), for the
# device machine:
#
#     bash bench/ab_bench.sh [--reps N] [--steps N] [--workloads small,medium]
#                            [--variant 'LABEL:NAME=VALUE[,NAME=VALUE...]']... [--no-launch-cost]
#                            [--memhist]
#
# Why: docs/benchmarks.md's cross-process rounds move by 5-20% between two
# processes of the same configuration, far more than the 0.5-2% targets.
# Here every profiled process runs under
#     gmemprof --schedule wait=4,warmup=1,active=5,repeat=0
# so its steps alternate between the wait phase and the active window, and
# bench/phase_ab.py compares each cycle's active steps with its own wait
# steps. Two programs:
#   - bench/launch_cost.c (gm_launch_cost): 2000 tiny kernels per step
#     through cudaLaunchKernel; per-launch host time (enqueue) and
#     launch+sync time, unprofiled and profiled (the default and each
#     --variant), interleaved N times: the
#     per-launch price of the wait phase and of the window in nanoseconds.
#   - bench/workload.py (small and medium GPT loops): step-time ratio active /
#     wait over STEPS timed steps (default 150 = 15 cycles), N processes each.
# --variant runs the workloads again with extra GMEMPROF_* settings (a
# diagnosis aid: e.g. 'nosample:GMEMPROF_SAMPLE_MS=0'); the control
# 'nokernels:GMEMPROF_KERNELS=0' must give ratio 1 within the noise.
# --memhist adds, per rep, two unprofiled processes that take PyTorch's
# memory history on and off the same way (workload.py --toggle-memhist
# python, all): its price beside the window's, each inside its process.
# Output: $OUT (default ./ab-out): ab.txt (the figures, printed last), the
# raw JSON lines and stderr logs.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 1
OUT=${OUT:-$ROOT/ab-out}
REPS=2
STEPS=150
WORKLOADS="medium small"
VARIANTS=()
LAUNCH_COST=1
MEMHIST=0
SCHED="wait=4,warmup=1,active=5,repeat=0"
SCHED_ABC=4,1,5

while [ $# -gt 0 ]; do
    case $1 in
    --reps) REPS=$2; shift ;;
    --steps) STEPS=$2; shift ;;
    --workloads) WORKLOADS=${2//,/ }; shift ;;
    --variant) VARIANTS+=("$2"); shift ;;
    --no-launch-cost) LAUNCH_COST=0 ;;
    --memhist) MEMHIST=1 ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "ab_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done

T0=$(date +%s)
say() { echo "[ab +$(($(date +%s) - T0))s] $*"; }
mkdir -p "$OUT/raw"
LAUNCH=$BUILD/bin/gmemprof
LC=$BUILD/bin/gm_launch_cost
AB=$ROOT/bench/phase_ab.py
say "build (incremental)"
bench_build "$OUT/build.log" ab_bench.sh

# prof LABEL ENVSPEC -> the launcher prefix for one profiled run
prof() {
    local label=$1 spec=$2
    local pre=("$LAUNCH" -q -o "$OUT/raw/$label.zst" --schedule "$SCHED" --)
    if [ -n "$spec" ]; then
        local e
        IFS=, read -r -a e <<<"$spec"
        pre=(env "${e[@]}" "${pre[@]}")
    fi
    printf '%s\n' "${pre[@]}"
}

{
    echo "# in-process A/B, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)"
    echo "# schedule: $SCHED; reps $REPS; workload steps $STEPS"
} >"$OUT/ab.txt"

# What every profiled run of a rep is: the default (no extra setting), then
# each --variant, as LABEL:ENVSPEC.
PROFILED=("default:" "${VARIANTS[@]}")
labels=()
for v in "${PROFILED[@]}"; do labels+=("${v%%:*}"); done

if [ "$LAUNCH_COST" = 1 ]; then
    say "launch cost: $REPS x (unprofiled, ${labels[*]}) interleaved"
    for ((r = 1; r <= REPS; r++)); do
        "${clean_env[@]}" "$LC" --steps 60 >"$OUT/raw/lc-none-$r.json" 2>"$OUT/raw/lc-none-$r.err"
        for v in "${PROFILED[@]}"; do
            mapfile -t pre < <(prof "lc-${v%%:*}-$r" "${v#*:}")
            "${clean_env[@]}" "${pre[@]}" "$LC" --steps 60 >"$OUT/raw/lc-${v%%:*}-$r.json" 2>"$OUT/raw/lc-${v%%:*}-$r.err"
        done
    done
    "$PY" - "$OUT/raw" "$REPS" "${labels[@]}" >>"$OUT/ab.txt" <<'PY'
import json, sys, os
sys.path.insert(0, os.path.join(os.getcwd(), "bench"))
from phase_ab import reduce, median
raw, reps, labels = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("\n## per launch, ns (gm_launch_cost: 2000 cudaLaunchKernel per step, 60 steps; median over steps)")
print("%-5s %-10s %-14s %10s %10s %10s  %s" % ("rep", "label", "figure", "unprofiled", "wait", "active",
                                             "active-wait, wait-unprof"))
for r in range(1, reps + 1):
    try:
        none = json.loads(open("%s/lc-none-%d.json" % (raw, r)).read())
    except (OSError, ValueError) as e:
        print("%-5d unprofiled run failed: %s" % (r, e))
        continue
    for label in labels:
        try:
            prof = json.loads(open("%s/lc-%s-%d.json" % (raw, label, r)).read())
        except (OSError, ValueError) as e:
            print("%-5d %-10s failed: %s" % (r, label, e))
            continue
        for k in ("enqueue_ns", "total_ns"):
            n = median(none[k][5:])
            ab = reduce(prof[k], 0, 4, 1, 5)
            print("%-5d %-10s %-14s %10.0f %10.0f %10.0f  %+.0f, %+.0f" % (r, label, k, n, ab["wait_median"],
                  ab["active_median"], ab["active_median"] - ab["wait_median"], ab["wait_median"] - n))
PY
fi

run_wl() { # LABEL WORKLOAD ENVSPEC REP
    local label=$1 w=$2 spec=$3 r=$4
    local f="$OUT/raw/$w-$label-$r"
    mapfile -t pre < <(prof "$w-$label-$r" "$spec")
    timeout -k 10 200 "${clean_env[@]}" "${pre[@]}" "$PY" bench/workload.py --size "$w" --warmup 10 --steps "$STEPS" \
        --config "ab-$label" --round "$r" >"$f.json" 2>"$f.err"
    echo "$f.json"
}

for w in $WORKLOADS; do
    say "workload $w: $REPS x (${labels[*]})"
    files=()
    for ((r = 1; r <= REPS; r++)); do
        for v in "${PROFILED[@]}"; do
            files+=("$(run_wl "${v%%:*}" "$w" "${v#*:}" "$r")")
        done
        if [ "$MEMHIST" = 1 ]; then
            for m in python all; do
                f="$OUT/raw/$w-memhist-$m-$r"
                timeout -k 10 200 "${clean_env[@]}" "$PY" bench/workload.py --size "$w" --warmup 10 --steps "$STEPS" \
                    --toggle-memhist "$m" --config "ab-memhist-$m" --round "$r" >"$f.json" 2>"$f.err"
                files+=("$f.json")
            done
        fi
    done
    {
        echo
        echo "## $w: step time active / wait in the same process (ms; per-cycle ratio median [min-max])"
        "$PY" "$AB" --schedule "$SCHED_ABC" --key step_ms "${files[@]}" | sed "s|$OUT/raw/||"
    } >>"$OUT/ab.txt"
done
# One trace kept readable: its step table shows the phases the ratios assume.
for t in "$OUT"/raw/medium-default-1.zst "$OUT"/raw/small-default-1.zst; do
    [ -s "$t" ] && "$BUILD/bin/gmem-analyze" "$t" --by step --top 20 >"${t%.zst}.steps.txt" 2>&1
done
rm -f "$OUT"/raw/*.zst
say "done in $(($(date +%s) - T0)) s"
cat "$OUT/ab.txt"
