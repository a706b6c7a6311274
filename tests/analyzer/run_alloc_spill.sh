#!/bin/sh
# run_alloc_spill.sh ANALYZE WORKDIR TRACE...
# --by alloc --top 0 is printed from sorted runs spilled to a file, merged
# a window of rows at a time. With runs of 7 rows (many runs, windows cut
# across them) the report equals the one the kept entries give
# (GMEM_ANALYZE_TEST_SPILL_RUN=off), for every sort key and format.
set -u
analyze=$1 work=$2
shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$work" || exit 1
cd "$work" || exit 1
for t in "$@"; do
    for sort in mem peak time name count; do
        GMEM_ANALYZE_TEST_SPILL_RUN=off "$analyze" "$t" --by alloc --sort "$sort" --top 0 >kept.out 2>kept.err
        a=$?
        GMEM_ANALYZE_TEST_SPILL_RUN=7 "$analyze" "$t" --by alloc --sort "$sort" --top 0 >spill.out 2>spill.err
        b=$?
        [ "$a" = "$b" ] || fail "$t --sort $sort: exit $a kept, $b spilled"
        [ -s kept.out ] || fail "$t --sort $sort: no report"
        cmp -s kept.out spill.out || { diff kept.out spill.out | head >&2; fail "$t --sort $sort: tables differ"; }
        cmp -s kept.err spill.err || fail "$t --sort $sort: stderr differs"
    done
    for fmt in csv json; do
        GMEM_ANALYZE_TEST_SPILL_RUN=off "$analyze" "$t" --by alloc --top 0 -f $fmt >one.out 2>/dev/null
        GMEM_ANALYZE_TEST_SPILL_RUN=7 "$analyze" "$t" --by alloc --top 0 -f $fmt >many.out 2>/dev/null
        cmp -s one.out many.out || fail "$t -f $fmt: runs of 7 differ from the kept entries"
    done
done
echo "alloc spill ok"
