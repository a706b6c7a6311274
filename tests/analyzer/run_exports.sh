#!/bin/sh
# run_exports.sh ANALYZE CHECKFMT TRACEDIR WORKDIR
# --chrome: strict JSON with the expected events (python3 -m json.tool too
# when present). --timeline: well-formed SVG (xmllint too when present) with
# the peak labelled; the page with its model and no external resource.
set -u
analyze=$1 checkfmt=$2 tracedir=$3 work=$4
mkdir -p "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tracedir" || exit 1

"$analyze" basic.gmt --chrome "$work/basic.json" >/dev/null || fail "--chrome basic"
# 6 kernels on stream 7; 13 live-bytes samples (2 baseline + 7 allocs + 4 frees);
# 2 NVTX ranges; 2 steps; 2 tags; 2 driver samples; window begin and end.
"$checkfmt" json "$work/basic.json" \
    '"cat":"kernel"=6' '"name":"live bytes"=13' '"cat":"nvtx"=2' '"cat":"step"=2' '"cat":"tag"=2' \
    '"name":"driver used"=2' '"cat":"window"=2' '"cat":"warning"=0' '"name":"GPU 0: Test GPU"=1' \
    '"name":"stream 7"=1' '"displayTimeUnit":"ms"=1' '"ts":15000.000,"dur":1.000=1' || fail "chrome basic content"
if command -v python3 >/dev/null 2>&1; then
    python3 -m json.tool "$work/basic.json" >/dev/null || fail "python3 json.tool rejects basic.json"
fi
"$analyze" truncated.gmt --chrome "$work/trunc.json" >/dev/null 2>&1; [ $? -eq 3 ] || fail "--chrome truncated: exit 3"
"$checkfmt" json "$work/trunc.json" '"cat":"warning"=1' '"warning":"trace truncated=1' || fail "chrome truncated"
"$analyze" attn_naive.gmt --chrome "$work/attn.json" --step 0 >/dev/null || fail "--chrome attn"
"$checkfmt" json "$work/attn.json" '"cat":"kernel"=4' || fail "chrome attn"

"$analyze" basic.gmt --timeline "$work/basic.svg" >/dev/null || fail "--timeline basic.svg"
"$checkfmt" xml "$work/basic.svg" 'peak dev0 127.00 MiB at 32.000 ms (step 1)=+1' 'step 0<=1' 'step 1<=1' \
    'before_step=+1' 'http://www.w3.org/2000/svg=1' 'src="http=0' 'href="http=0' '<rect x=+9' || fail "timeline basic.svg"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$work/basic.svg" || fail "xmllint rejects basic.svg"
fi
# --diff: both lanes on one axis of steps; basic's steps 0 and 1 begin at 11 and 26 ms as
# multiwin's do (multiwin adds step 3 at 41 ms), so each step's label has one x in both lanes
"$analyze" basic.gmt --diff multiwin.gmt --timeline "$work/diff.svg" >/dev/null || fail "--timeline --diff svg"
"$checkfmt" xml "$work/diff.svg" 'steps (each lane=2' 'time since trace start=0' '>step 0<=2' '>step 1<=2' \
    '>step 3<=1' || fail "timeline diff.svg: not on one axis of steps"
for n in 0 1; do
    xs=$(grep -o "<text x=\"[0-9.]*\" y=\"[0-9.]*\" fill=\"#666\" text-anchor=\"middle\">step $n<" "$work/diff.svg" |
        sed 's/^<text x="\([0-9.]*\)".*/\1/' | sort -u | wc -l)
    [ "$xs" = 1 ] || fail "timeline diff.svg: step $n at $xs places, not one"
done
# the page: the model as JSON, nothing from the network (run_timeline.sh checks its numbers)
"$analyze" basic.gmt --timeline "$work/basic.html" >/dev/null || fail "--timeline basic.html"
for s in 'id="gmem-data"' '"nall":9,'; do
    grep -q "$s" "$work/basic.html" || fail "timeline basic.html lacks $s"
done
if grep -q -e 'src="http' -e 'href="http' -e 'url(http' "$work/basic.html"; then fail "timeline basic.html loads from the network"; fi
"$analyze" truncated.gmt --timeline "$work/trunc.svg" >/dev/null 2>&1; [ $? -eq 3 ] || fail "--timeline truncated: exit 3"
"$checkfmt" xml "$work/trunc.svg" 'WARNING: trace truncated=1' || fail "timeline truncated warning"
"$analyze" twodev.gmt --timeline "$work/twodev.html" >/dev/null || fail "--timeline twodev"
grep -q '"dev1"' "$work/twodev.html" || fail "timeline twodev: no lane dev1"
# several traces: one process per rank, named after its rank, host and GPU
"$analyze" rank0.gmt rank1.gmt rank2.gmt --chrome "$work/ranks.json" >/dev/null || fail "--chrome ranks"
"$checkfmt" json "$work/ranks.json" \
    '"name":"rank 0 (node-a, GPU 0)"=1' '"name":"rank 1 (node-a, GPU 1)"=1' '"name":"rank 2 (node-b, GPU 2)"=1' \
    '"name":"process_name"=3' '"cat":"kernel"=9' '"name":"live bytes GPU 2"=+1' '"name":"GPU 1 stream 7"=1' \
    '"s":"g"=0' '"traces":["rank0.gmt","rank1.gmt","rank2.gmt"]=1' || fail "chrome ranks content"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$work/ranks.json" <<'PY' || fail "chrome ranks: pids"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
assert sorted(names.values()) == ["rank 0 (node-a, GPU 0)", "rank 1 (node-a, GPU 1)", "rank 2 (node-b, GPU 2)"], names
kernels = {}
for e in ev:
    if e.get("cat") == "kernel":
        kernels[e["pid"]] = kernels.get(e["pid"], 0) + 1
assert sorted(kernels) == sorted(names) and set(kernels.values()) == {3}, kernels
PY
fi
"$analyze" rank0.gmt rank1.gmt rank2.gmt rank3.gmt --timeline "$work/ranks.svg" >/dev/null || fail "--timeline ranks.svg"
"$checkfmt" xml "$work/ranks.svg" 'peak rank 0 dev0 104.00 MiB at 14.000 ms=1' 'peak rank 3 dev3 128.00 MiB at 14.000 ms=1' \
    'rank 2 dev2 live=1' || fail "timeline ranks.svg"
"$analyze" rank0.gmt rank1.gmt rank2.gmt rank3.gmt --timeline "$work/ranks.html" >/dev/null || fail "--timeline ranks.html"
grep -q '"rank 3 dev3"' "$work/ranks.html" || fail "timeline ranks.html: no lane for rank 3"
echo "exports ok"
