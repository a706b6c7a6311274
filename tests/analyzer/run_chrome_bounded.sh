#!/bin/sh
# run_chrome_bounded.sh ANALYZE CHECKFMT SYNTH TRACEDIR WORKDIR
# --chrome-largest N: the N largest allocations and the memory counters,
# kernels, copies and ranges left out and counted; the warning once a
# Chrome export passes its limit (GMEM_ANALYZE_TEST_CHROME_WARN_BYTES,
# test-only, lowers the 256 MiB). The numbers are basic.gmt's and rank.gmt's
# (tests/analyzer/scenarios.c).
set -u
analyze=$1 checkfmt=$2 synth=$3 tracedir=$4 work=$5
mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tracedir" || exit 1
unset GMEM_ANALYZE_TEST_CHROME_WARN_BYTES

# basic: 9 allocations (the baseline's 64 and 32 MiB, A1-A7 of 1, 2, 4, 8, 16, 5, 6 MiB);
# the 3 largest are 64, 32 (never freed) and A5's 16 MiB (freed at 33 ms, kernD's);
# live bytes at their starts (64, 96, 118 MiB), A5's end (111) and the peak (127): 5 points;
# the baselines overlap each other and A5: 3 lanes; 6 kernels and 2 ranges left out;
# steps, tags, driver samples and window edges as in the full export.
"$analyze" basic.gmt --chrome-largest 3 --chrome "$work/b3.json" >"$work/b3.out" 2>"$work/b3.err" || fail "--chrome-largest 3"
"$checkfmt" json "$work/b3.json" \
    '"cat":"allocation"=3' '"bytes":67108864=1' '"bytes":33554432=1' '"bytes":16777216=1' \
    '"end":"live at the end"=2' '"end":"freed"=1' '"name":"triton_poi_fused_add_0"=1' \
    '"name":"live bytes"=5' '"live_bytes":67108864=1' '"live_bytes":100663296=1' '"live_bytes":123731968=1' \
    '"live_bytes":116391936=1' '"live_bytes":133169152=1' \
    '"name":"largest allocations 3"=1' '"name":"largest allocations 4"=0' \
    '"cat":"kernel"=0' '"cat":"nvtx"=0' '"cat":"step"=2' '"cat":"tag"=2' '"name":"driver used"=2' '"cat":"window"=2' \
    '"cat":"note"=1' '"allocations":9,=1' '"allocations_kept":3,=1' '"kernels_left_out":6,=1' \
    '"ranges_left_out":2,=1' '"copies_left_out":0,=1' || fail "--chrome-largest 3: content"
grep -q "wrote $work/b3.json (Chrome/Perfetto trace events: the 3 largest of 9 allocations (--chrome-largest 3)" \
    "$work/b3.out" || fail "--chrome-largest 3: no 'wrote' line saying so: $(cat "$work/b3.out")"
[ -s "$work/b3.err" ] && fail "--chrome-largest 3: stderr: $(cat "$work/b3.err")"
if command -v python3 >/dev/null 2>&1; then
    python3 -m json.tool "$work/b3.json" >/dev/null || fail "python3 json.tool rejects b3.json"
fi
# N = 0: the counters alone (the peak's point), all 9 allocations counted
"$analyze" basic.gmt --chrome-largest 0 --chrome "$work/b0.json" >/dev/null || fail "--chrome-largest 0"
"$checkfmt" json "$work/b0.json" '"cat":"allocation"=0' '"name":"live bytes"=1' '"allocations":9,=1' \
    '"allocations_kept":0,=1' || fail "--chrome-largest 0: content"
# beside a report: the note on stderr
"$analyze" basic.gmt --chrome-largest 3 --chrome "$work/b3r.json" --format csv >/dev/null 2>"$work/b3r.err" ||
    fail "--chrome-largest with --format"
grep -q "^gmem-analyze: note: --chrome $work/b3r.json: the 3 largest of 9 allocations" "$work/b3r.err" ||
    fail "--chrome-largest with a report: no note: $(cat "$work/b3r.err")"
# several ranks: 2 per trace of rank0-2's 4 (64 MiB baseline, A 32, N 8/16/24, B 16): the
# 64 and the 32 each; per rank, live bytes at their starts, A's end and the peak: 4
"$analyze" rank0.gmt rank1.gmt rank2.gmt --chrome-largest 2 --chrome "$work/r2.json" >/dev/null || fail "ranks"
"$checkfmt" json "$work/r2.json" '"cat":"allocation"=6' '"bytes":67108864=3' '"bytes":33554432=3' \
    '"name":"live bytes GPU 0"=4' '"name":"live bytes GPU 2"=4' '"name":"GPU 1 largest allocations 2"=1' \
    '"cat":"kernel"=0' '"allocations":12,=1' '"allocations_kept":6,=1' '"kernels_left_out":9,=1' ||
    fail "ranks: content"

# the full export of basic passes 1000 bytes: one warning, at the end (fewer than 4096 events)
GMEM_ANALYZE_TEST_CHROME_WARN_BYTES=1000 "$analyze" basic.gmt --chrome "$work/w.json" >/dev/null 2>"$work/w.err" ||
    fail "--chrome with the warning"
n=$(grep -c "^gmem-analyze: warning: --chrome $work/w.json has passed 1000 bytes, more than chrome://tracing opens" \
    "$work/w.err")
[ "$n" = 1 ] || fail "warning: $n lines, expected 1: $(cat "$work/w.err")"
grep -q -- "--chrome-largest N writes the memory counters and the N largest allocations only" "$work/w.err" ||
    fail "warning: does not offer --chrome-largest"
"$analyze" basic.gmt --chrome "$work/nw.json" >/dev/null 2>"$work/nw.err" || fail "--chrome"
[ -s "$work/nw.err" ] && fail "a warning under 256 MiB: $(cat "$work/nw.err")"
# while reading a file: said as it passes, with how far the trace is (a 1 MiB limit, a
# 200,000-record trace whose export is tens of MiB: passed long before the end)
"$synth" -q --events 200k -o "$work/s.zst" || exit 1
GMEM_ANALYZE_TEST_CHROME_WARN_BYTES=1048576 "$analyze" "$work/s.zst" --chrome "$work/s.json" >/dev/null \
    2>"$work/s.err" || fail "--chrome synth"
n=$(grep -c "^gmem-analyze: warning: --chrome $work/s.json has passed 1 MiB at [0-9]*% of the trace (about [0-9.]* MiB in all)" "$work/s.err")
[ "$n" = 1 ] || fail "warning while reading: $n lines: $(cat "$work/s.err")"
echo "chrome bounded: ok"
