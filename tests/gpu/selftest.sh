#!/bin/sh
# check_trace self-test (no GPU): selftest.sh DEFECT FAKE_TRACE CHECK_TRACE DIR
# DEFECT "good": the trace of fake_trace.c must pass every check, and the peak
# must be the 17 MiB worked out by hand in fake_trace.c. Any other DEFECT is
# planted by fake_trace --mutate and check_trace must fail with exit 1 (a
# check failed), not 0 (missed) or 2 (could not read).
set -u
defect=$1 fake=$2 check=$3 dir=$4
mkdir -p "$dir"
trace="$dir/$defect.zst" exp="$dir/$defect.json"
if [ "$defect" = good ]; then
    "$fake" "$trace" "$exp" || exit 1
    "$check" "$trace" --expect-json "$exp" --expect windows=1 --expect active_steps=2 \
        --expect first_active_step=2 --expect baseline_count_min=3 --expect kernels_in_window=1 \
        --expect step_source=api --expect trailer=1 --expect dropped=0 --expect unmatched=0 --expect tag=after_alloc \
        --expect free_order=0 || exit 1
    peak=$("$check" "$trace" --print-peak) || exit 1
    if [ "$peak" != 17825792 ]; then
        echo "peak $peak, expected 17825792 (17 MiB)"
        exit 1
    fi
    "$check" "$trace" --summary >"$dir/summary.json" || exit 1
    "$check" "$trace" --ranges "$dir/ranges.json" || exit 1
    echo "selftest good: pass, peak $peak"
    exit 0
fi
"$fake" --mutate "$defect" "$trace" "$exp" || exit 1
"$check" "$trace" --expect-json "$exp" --expect free_order=0 2>"$dir/$defect.log"
rc=$?
grep FAIL "$dir/$defect.log"
if [ "$rc" -ne 1 ]; then
    echo "selftest $defect: check_trace exit $rc, expected 1 (the defect must be reported)"
    exit 1
fi
echo "selftest $defect: defect reported"
exit 0
