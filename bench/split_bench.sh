#!/usr/bin/env bash
# The PyTorch bridge's tensor cost split into PyTorch's share and
# gmemprof's, each measured inside one process, for the device machine:
#
#     bash bench/split_bench.sh [--reps N] [--workloads alloc,alloc-large,small,medium]
#
# Builds Release with the bridge (build-gpu/, as bridge_bench.sh), then per
# rep and workload runs bench/tracker_split.py four times, interleaved:
#   bare              no gmemprof: the allocator alone, then with the
#                     bridge's tracker attached and returning at once
#                     (PyTorch's TraceEntry and std::function call: the
#                     floor under any tracker);
#   gmemprof          under gmemprof with the bridge, GMEMPROF_TORCH_OPS=0
#                     (tensors only: op ranges have their own price, and
#                     the detach would stop them too): every event
#                     forwarded, then the bridge detached (the same floor):
#                     the events' own price;
#   bare-control, gmemprof-control
#                     the same processes with no switch: the drift of two
#                     phases, the noise to read the shares against.
# Output ($OUT, default ./bench-out): split.txt (the tracker_split lines),
# split.md (the summary table, printed last), stderr logs in build-gpu/split-bench/.
# GM_COMMIT names the commit in split.md where the tree's own git does not
# know it (a copied working tree).
# Workloads: alloc,alloc-large,small by default (tracker_split.py says what
# each is; the small loop's projection prices its large-pool tensors at
# alloc-large's cost). Expected wall time on an H200: about 5 minutes for
# 3 reps after the build.
set -uo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT" || exit 1
REPS=3
WORKLOADS="alloc alloc-large small"
while [ $# -gt 0 ]; do
    case $1 in
    --reps) REPS=$2; shift ;;
    --workloads) WORKLOADS=${2//,/ }; shift ;;
    -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "split_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
bench_torch_begin split_bench

SPLIT=$ROOT/bench/tracker_split.py
: >"$OUT/split.txt"
# one ROLE WORKLOAD: one process, its line appended to split.txt
one() {
    local role=$1 wl=$2 pre=() ctl=()
    case $role in
    gmemprof*) pre=(GMEMPROF_TORCH_OPS=0 "$BUILD/bin/gmemprof" -q -o "$WORK/split.zst" --) ;;
    esac
    case $role in
    *-control) ctl=(--control) ;;
    esac
    local err="$WORK/$role-$wl.stderr"
    timeout -k 10 300 "${clean_env[@]}" GM_BUILD_DIR="$BUILD" ${pre[@]+"${pre[@]}"} \
        "$PY" "$SPLIT" "$wl" ${ctl[@]+"${ctl[@]}"} >/dev/null 2>"$err"
    local line
    line=$(grep '^tracker_split ' "$err" | tail -1)
    echo "${line:-# $role $wl failed: $(tail -1 "$err")}" | tee -a "$OUT/split.txt"
    # the bridge's events in the trace: none means phase A was not what it says
    if [ -s "$WORK/split.zst" ]; then
        local fw
        fw=$("$BUILD/bin/gmem-analyze" "$WORK/split.zst" --format csv 2>/dev/null | grep '^# source.framework')
        echo "# $role $wl: ${fw:-no framework events in the trace}" | tee -a "$OUT/split.txt"
    fi
    rm -f "$WORK/split.zst"
}

for rep in $(seq 1 "$REPS"); do
    for wl in $WORKLOADS; do
        say "rep $rep/$REPS: $wl"
        for role in bare gmemprof bare-control gmemprof-control; do
            one "$role" "$wl"
        done
    done
done
{
    echo "# tracker split, $(date -u +%Y-%m-%dT%H:%MZ), commit ${GM_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)}"
    echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
    "$PY" "$SPLIT" summary "$OUT/split.txt"
} >"$OUT/split.md"
rc=$?
say "done in $(($(date +%s) - T0)) s; files in $OUT"
cat "$OUT/split.md"
exit $rc
