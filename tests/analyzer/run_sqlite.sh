#!/bin/sh
# run_sqlite.sh ANALYZE WORKDIR TRACE...
# The --sqlite export of each sample answers, by query, what the report
# says: the peak (summary and the allocations' own live_after), the top
# owners by range (bytes and counts), the per-kernel allocated bytes, and
# the per-step totals of --by step. Skips (77) without the sqlite3 shell or
# a gmem-analyze built without SQLite.
set -u
analyze=$1 work=$2
shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v sqlite3 >/dev/null 2>&1 || { echo "SKIP: no sqlite3 shell (apt-get install sqlite3)"; exit 77; }
mkdir -p "$work" || exit 1
cd "$work" || exit 1
# commas inside quoted CSV fields (demangled names) become ';'
unquote() { sed -E -e ':a' -e 's/^(([^"]*"[^"]*")*[^"]*"[^",]*),/\1;/' -e 'ta' -e 's/"//g'; }
rows() { grep -v '^#' | tail -n +2 | unquote; }
for t in "$@"; do
    name=$(basename "$t" .zst)
    rm -f "$name.db"
    if ! "$analyze" "$t" --sqlite "$name.db" >out.txt 2>err.txt; then
        grep -q "built without SQLite" err.txt && { echo "SKIP: built without SQLite"; exit 77; }
        cat err.txt >&2
        fail "$name: --sqlite"
    fi
    grep -q "wrote $name.db (SQLite, " out.txt || fail "$name: no 'wrote' line: $(cat out.txt)"
    q() { sqlite3 -separator , "$name.db" "$1"; }
    # the peak of device 0
    want=$("$analyze" "$t" -f csv | sed -n 's/^# peak.dev0: bytes=\([0-9]*\) .*/\1/p')
    [ -n "$want" ] || fail "$name: no peak in the report"
    got=$(q "SELECT peak_bytes FROM summary WHERE device = 0")
    [ "$got" = "$want" ] || fail "$name: summary peak $got, report $want"
    got=$(q "SELECT max(live_after) FROM allocations WHERE device = 0")
    [ "$got" = "$want" ] || fail "$name: max(live_after) $got, report $want"
    # top owners by range: name, allocated bytes, count (columns 1, 5, 9)
    "$analyze" "$t" --by range --sort alloc --top 8 -f csv | rows | cut -d, -f1,5,9 >want.txt
    q "SELECT replace(range, ',', ';'), sum(bytes), count(*) FROM allocations_named WHERE baseline = 0
       GROUP BY range ORDER BY 2 DESC, 1 LIMIT 8" >got.txt
    [ -s want.txt ] || fail "$name: no range rows"
    sort want.txt >a.txt
    sort got.txt >b.txt
    cmp -s a.txt b.txt || { diff a.txt b.txt >&2; fail "$name: top ranges differ"; }
    # each allocation's kernel: --by alloc's rows summed by kernel (columns 3, 11)
    "$analyze" "$t" --by alloc --top 0 -f csv | rows |
        awk -F, '{ b[$11] += $3; n[$11]++ } END { for (k in b) print k "," b[k] "," n[k] }' | sort >want.txt
    q "SELECT replace(kernel, ',', ';'), sum(bytes), count(*) FROM allocations_named GROUP BY kernel_id" |
        sort >got.txt
    cmp -s want.txt got.txt || { diff want.txt got.txt >&2; fail "$name: per-kernel totals differ"; }
    # per-step totals: step, alloc_count, alloc_bytes (columns 1, 5, 6)
    "$analyze" "$t" --by step -f csv | rows | awk -F, '$5 > 0 { print $1 "," $5 "," $6 }' >want.txt
    q "SELECT step, count(*), sum(bytes) FROM allocations WHERE baseline = 0 GROUP BY step ORDER BY step" >got.txt
    cmp -s want.txt got.txt || { diff want.txt got.txt >&2; fail "$name: per-step totals differ"; }
    echo "$name: peak $want, $(wc -l <want.txt) steps match"
done
# refused: several traces, standard output
"$analyze" "$1" "$1" --sqlite x.db >/dev/null 2>err.txt && fail "two traces accepted"
grep -q -- "--sqlite exports one trace" err.txt || fail "two traces: $(cat err.txt)"
echo "sqlite ok"
