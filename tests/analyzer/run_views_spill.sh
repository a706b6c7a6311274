#!/bin/sh
# run_views_spill.sh ANALYZE WORKDIR TRACE...
# --insights and --timeline keep what they hold per allocation in temporary
# files (spill.c). With runs of 7 elements and a window of 4 records (every
# record read back from the file, every sort merged from many runs, every
# array mapped) each output equals the one of the default sizes, alone and
# under --diff (each trace against the first).
set -u
analyze=$1 work=$2
shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$work" || exit 1
cd "$work" || exit 1
first=$1
# run NAME ARGS...: both sizes; the outputs (stdout and out.*) compared
run() {
    name=$1
    shift
    rm -f out.html out.svg
    "$analyze" "$@" >big.out 2>big.err
    a=$?
    for f in out.html out.svg; do [ -f $f ] && mv $f big.$f; done
    GMEM_ANALYZE_TEST_SPILL_RUN=7 GMEM_ANALYZE_TEST_SPILL_WINDOW=4 "$analyze" "$@" >small.out 2>small.err
    b=$?
    [ "$a" = "$b" ] || fail "$name: exit $a, $b with small spills"
    cmp -s big.out small.out || { diff big.out small.out | head >&2; fail "$name: outputs differ"; }
    cmp -s big.err small.err || fail "$name: stderr differs"
    for f in out.html out.svg; do
        [ -f big.$f ] || continue
        cmp -s big.$f $f || fail "$name: $f differs"
        rm -f big.$f
    done
}
for t in "$@"; do
    run "$t --insights" "$t" --insights
    run "$t --insights -f json" "$t" --insights -f json
    run "$t --insights -f csv" "$t" --insights -f csv
    run "$t --timeline html" "$t" --timeline out.html
    run "$t --timeline svg" "$t" --timeline out.svg
    run "$t --diff --insights" "$t" --diff "$first" --insights
    run "$t --diff --timeline" "$t" --diff "$first" --timeline out.html
done
echo "views spill ok"
