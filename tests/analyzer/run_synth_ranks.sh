#!/bin/sh
# run_synth_ranks.sh SYNTH ANALYZE WORKDIR
# Per-rank gmem-synth traces (a rank-dependent NCCL-like buffer of
# (r + 1) x 8 MiB in the baseline): --by rank sees the baselines 8 MiB
# apart, and the merged kernel table's allocated bytes and calls equal the
# sums of the single-trace tables, computed here from their CSV.
set -u
synth=$1 analyze=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$work" || exit 1
cd "$work" || exit 1
for r in 0 1 2; do
    "$synth" --steps 6 --layers 1 --seed 7 --rank $r --world-size 3 -q -o "r$r.zst" || fail "gmem-synth rank $r"
done
"$analyze" r0.zst r1.zst r2.zst --by rank --sort name --format csv >rank.csv || fail "--by rank"
# columns: rank,host,devices,peak_bytes,imbalance,peak_step,peak_ns,baseline_bytes,...
awk -F, '!/^#/ && NR > 1 && $1 != "rank" { b[$1] = $8 }
         END { if (b[1] - b[0] != 8388608 || b[2] - b[1] != 8388608) { print "baselines " b[0] " " b[1] " " b[2]; exit 1 } }' \
    rank.csv || fail "baselines are not 8 MiB apart"
# commas inside quoted CSV fields (demangled names) become ';' so that
# awk -F, and cut see one field per column
unquote() { sed -E -e ':a' -e 's/^(([^"]*"[^"]*")*[^"]*"[^",]*),/\1;/' -e 'ta'; }
# merged kernel table = sum of the per-rank tables (every row)
"$analyze" r0.zst r1.zst r2.zst --top 0 --format csv | unquote >merged.csv || fail "merged"
: >single.csv
for r in 0 1 2; do "$analyze" r$r.zst --top 0 --format csv | grep -v '^#' | tail -n +2 | unquote >>single.csv || fail "single $r"; done
# name,calls,self_bytes,alloc_bytes,...: sums of calls (2) and alloc_bytes (4)
want=$(awk -F, '{ c += $2; a += $4 } END { print c, a }' single.csv)
got=$(grep -v '^#' merged.csv | tail -n +2 | awk -F, '{ c += $2; a += $4 } END { print c, a }')
[ "$want" = "$got" ] || fail "merged calls/allocated $got, per-rank sums $want"
rows=$(grep -v '^#' merged.csv | tail -n +2 | wc -l)
singles=$(cut -d, -f1 single.csv | sort -u | wc -l)
[ "$rows" -eq "$singles" ] || fail "merged has $rows rows, $singles distinct names"
echo "synth ranks ok"
