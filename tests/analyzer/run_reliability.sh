#!/bin/sh
# run_reliability.sh ANALYZE TRACEDIR WORKDIR: what gmem-analyze does with
# outputs that name its inputs, failed runs, damaged traces (issue 26).
#   1  an output that is an input (same inode, by any name) or another output:
#      exit 2, nothing touched; --chrome - refused; a failed run leaves an
#      earlier export as it was and no temporary file
#   5  control bytes in paths never reach the terminal raw
#   7  --step / --device that match nothing warn, as --window does; so
#      does --layer blocks on a trace without PyTorch blocks, and --by tag
#      on a trace without tags says how tags are made
#   8  CSV's truncated= agrees with JSON's "truncated" on a damaged trace
#   9  exit 3 for a report made from an incomplete trace (truncated,
#      damaged, no checksum), 0 for a complete one
#  10  frames without a zstd checksum give a warning
#  11  a diff's and a set of ranks' warnings say which trace they are about,
#      in the table and in CSV
#  13  streams (issue 39): /dev/stdout, /dev/fd/1 and '-' are written in
#      place (appended to as the shell opened them), never renamed over; an
#      export to stdout beside a report there is refused; an output that is
#      standard input's trace (TRACE '-') is refused; a full device says
#      ENOSPC; a directory as TRACE says so; an export whose directory is
#      removed before the run ends is a failure, not "wrote"
#  14  names from a trace (hostile.gmt: ESC, CR, LF and bad UTF-8 in a
#      kernel name, the host and the device; formula-like names; a range of
#      62 bytes): the table shows control bytes escaped, CSV keeps a record
#      and a comment on one line each and prefixes formulas with ', CSV and
#      JSON carry whole names, and every text output is valid UTF-8 (U+FFFD
#      for the bad bytes): the SVG parses as XML, the page and the Chrome
#      export decode
#  15  sizes past what a machine holds (huge.gmt: 2^63 twice, then 2^61,
#      2^61 - 2 MiB, 1 MiB, a free of 1 MiB, 2^61): the sizes taken stop at
#      2^62 in all, the rest are refused with a note, and no total wraps,
#      also summed over three ranks
#  12  a diff against a launch-mode trace shows its kernel time as missing,
#      not as 0 ns, with no delta or ratio, in every format; so do --by
#      device and ranks that all ran in launch mode, per rank and in the totals
set -u
analyze=$1 tracedir=$2 work=$3
fail() { echo "FAIL: $*" >&2; failed=1; }
failed=0
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
cp "$tracedir/basic.gmt" t.gmt && cp "$tracedir/twodev.gmt" b.gmt && cp "$tracedir/rank0.gmt" r0.gmt &&
    cp "$tracedir/rank1.gmt" r1.gmt || exit 1
cp t.gmt t.orig && cp b.gmt b.orig && cp r1.gmt r1.orig

# expect RC WHAT CMD...: runs CMD, stdout to out, stderr to err
expect() {
    want=$1 what=$2
    shift 2
    "$@" >out 2>err
    rc=$?
    [ "$rc" -eq "$want" ] || fail "$what: exit $rc, expected $want: $(cat err)"
}
has() { grep -qF -- "$2" "$1" || fail "no '$2' in $1: $(cat "$1")"; }

# ---- 1: outputs that are inputs -----------------------------------------------
expect 2 "--chrome onto the trace" "$analyze" t.gmt --chrome t.gmt
has err "is the trace t.gmt"
cmp -s t.gmt t.orig || fail "--chrome t.gmt changed the trace"
expect 2 "--diff B --chrome B" "$analyze" t.gmt --diff b.gmt --chrome b.gmt
cmp -s b.gmt b.orig || fail "--diff B --chrome B changed B"
expect 2 "a rank trace as --chrome" "$analyze" r0.gmt r1.gmt --chrome r1.gmt
cmp -s r1.gmt r1.orig || fail "rank trace changed"
ln -sf t.gmt link.gmt
expect 2 "--chrome through a link to the trace" "$analyze" t.gmt --chrome link.gmt
cmp -s t.gmt t.orig || fail "the trace changed through a link"
mkdir -p sub && expect 2 "--chrome by another name" "$analyze" t.gmt --chrome sub/../t.gmt
expect 2 "--timeline onto the trace" "$analyze" t.gmt --timeline t.gmt.svg --chrome t.gmt
cmp -s t.gmt t.orig || fail "the trace changed"
# two outputs, one file (both new)
expect 2 "--chrome X --timeline X" "$analyze" t.gmt --chrome x.html --timeline x.html
has err "are one file"
[ ! -e x.html ] || fail "x.html written"
# --chrome - beside a report: refused, no file named '-'
expect 2 "--chrome - with a report" "$analyze" t.gmt --chrome - --format table
has err "writes to standard output, where the report goes too"
[ ! -s out ] || fail "--chrome - with a report wrote to stdout: $(cat out)"
[ ! -e ./- ] || fail "a file named - was written"
# a failed run leaves the earlier export, and no temporary file
expect 0 "a good export" "$analyze" t.gmt --chrome good.json --timeline good.svg
cp good.json good.json.orig && cp good.svg good.svg.orig
cp "$tracedir/garbage.gmt" bad.gmt
expect 1 "a failed run over an export" "$analyze" bad.gmt --chrome good.json --timeline good.svg
cmp -s good.json good.json.orig || fail "the failed run changed good.json"
cmp -s good.svg good.svg.orig || fail "the failed run changed good.svg"
expect 1 "a failed rank run over an export" "$analyze" r0.gmt bad.gmt --chrome good.json
cmp -s good.json good.json.orig || fail "the failed rank run changed good.json"
leftover=$(ls -A | grep -c '^\.good')
[ "$leftover" -eq 0 ] || fail "temporary files left: $(ls -A)"

# ---- 5: control bytes in paths ----------------------------------------------------
esc=$(printf 'e\033[31m')
expect 1 "a missing trace with ESC in its name" "$analyze" "$esc.gmt"
if grep -q "$(printf '\033')" err; then fail "raw ESC on stderr: $(cat err)"; fi
has err 'e\x1b[31m.gmt'
expect 0 "an export with ESC in its name" "$analyze" t.gmt --chrome "$esc.json"
if grep -q "$(printf '\033')" out; then fail "raw ESC on stdout: $(cat out)"; fi
has out 'wrote e\x1b[31m.json'
[ -f "$esc.json" ] || fail "the file was not written under its own name"

# ---- 7: selections that match nothing --------------------------------------------
expect 0 "--step 999" "$analyze" t.gmt --step 999
has out "WARNING: step 999 is not in this trace (this trace has steps 0-1)"
expect 0 "--device 5" "$analyze" t.gmt --device 5
has out "WARNING: device 5 is not in this trace (this trace has device 0 only)"
expect 0 "--window 9" "$analyze" t.gmt --window 9
has out "WARNING: window 9 is not in this trace (this trace has window 0 only)"
# what the warning offers instead: ranges, and none
expect 0 "--device 5, two devices" "$analyze" b.gmt --device 5 --format csv
has out "this trace has devices 0-1"
expect 0 "--step 3 without steps" "$analyze" "$tracedir/nowindow.gmt" --step 3
has out "step 3 is not in this trace (this trace has no steps)"
expect 0 "--step 1 (present)" "$analyze" t.gmt --step 1
if grep -q "WARNING" out; then fail "--step 1 warned: $(cat out)"; fi
# --by tag on a trace without tags says how tags are made
expect 0 "--by tag without tags" "$analyze" "$tracedir/nowindow.gmt" --by tag
has out "The trace holds no tag. A tag is an NVTX mark"
expect 0 "--by tag with tags" "$analyze" t.gmt --by tag
if grep -q "holds no tag" out; then fail "--by tag on a trace with tags: $(cat out)"; fi
# --layer blocks where the bridge reported nothing: said, and not called tensors
expect 0 "--layer blocks without blocks" "$analyze" t.gmt --layer blocks
has out "WARNING: --layer blocks: the trace holds no PyTorch blocks"
has out "Allocator  none: --layer blocks, and the trace holds no PyTorch blocks"
expect 0 "--layer blocks without blocks (csv)" "$analyze" t.gmt --layer blocks --format csv
has out '# WARNING: --layer blocks: the trace holds no PyTorch blocks'
expect 0 "--layer blocks --insights without blocks" "$analyze" t.gmt --layer blocks --insights
has err "gmem-analyze: warning: t.gmt: --layer blocks: the trace holds no PyTorch blocks"
expect 0 "--layer blocks with blocks" "$analyze" "$tracedir/torch.gmt" --layer blocks
if grep -q "warning" err; then fail "--layer blocks on a trace with blocks warned: $(cat err)"; fi
if grep -q "WARNING" out; then fail "--layer blocks on a trace with blocks warned: $(cat out)"; fi
has out "Allocator  PyTorch caching allocator, tensors"

# ---- 8, 9: damaged and truncated traces ---------------------------------------------
expect 3 "a damaged trace (csv)" "$analyze" "$tracedir/damaged.gmt" --format csv
has out "truncated=1"
has err "warning:"
expect 3 "a damaged trace (json)" "$analyze" "$tracedir/damaged.gmt" --format json
has out '"truncated": true'
expect 3 "a truncated trace" "$analyze" "$tracedir/truncated.gmt"
expect 3 "a truncated trace in a diff" "$analyze" t.gmt --diff "$tracedir/truncated.gmt"
expect 3 "a truncated rank" "$analyze" r0.gmt "$tracedir/truncated.gmt"
expect 0 "a complete trace" "$analyze" t.gmt --format csv
has out "truncated=0"
expect 0 "--help" "$analyze" --help
has out "3 the report was made, but a trace is incomplete"

# ---- 10: frames without a checksum ----------------------------------------------------
expect 3 "frames without a checksum" "$analyze" "$tracedir/nochecksum.gmt"
has err "2 of 2 frames carry no zstd checksum"
has out "WARNING: trace altered"

# ---- 11: whose warning ------------------------------------------------------------------
for fmt in table csv; do
    lead=
    [ "$fmt" = csv ] && lead="# "
    expect 3 "--diff against a truncated trace ($fmt)" "$analyze" t.gmt --diff "$tracedir/truncated.gmt" --format "$fmt"
    has out "${lead}WARNING (B): trace truncated"
    if grep -qF "WARNING (A)" out; then fail "--diff ($fmt): a warning about the complete trace A"; fi
    expect 3 "a truncated rank ($fmt)" "$analyze" r0.gmt "$tracedir/truncated.gmt" --format "$fmt"
    has out "${lead}WARNING: 1 of 2 traces record no rank"
    has out "${lead}WARNING: rank 1: trace truncated"
done

# ---- 12: what a trace did not collect -------------------------------------------------
expect 0 "--diff against launch mode" "$analyze" t.gmt --diff "$tracedir/launch.gmt"
grep -q '^kernel time  *21\.0 us  *-  *-  *-$' out || fail "kernel time row: $(grep 'kernel time' out)"
expect 0 "--diff against launch mode (csv)" "$analyze" t.gmt --diff "$tracedir/launch.gmt" --format csv
has out "# summary: metric=kernel time a=21000 b= delta="
expect 0 "--diff against launch mode (json)" "$analyze" t.gmt --diff "$tracedir/launch.gmt" --format json
tr -d ' \n' <out >flat
has flat '"metric":"kerneltime","unit":"ns","a":21000,"b":null,"delta":null,"ratio":null'
expect 0 "--diff with kernel times on both sides" "$analyze" t.gmt --diff t.gmt --format csv
has out "# summary: metric=kernel time a=21000 b=21000 delta=0"
expect 0 "--by device in launch mode (csv)" "$analyze" "$tracedir/launch.gmt" --by device --format csv
has out "0,Test GPU,17179869184,100663296,133169152,1,32000000,44040192,28311552,15728640,15728640,6,,251658240,"
cp "$tracedir/launch.gmt" l0.gmt && cp "$tracedir/launch.gmt" l1.gmt
expect 0 "ranks in launch mode" "$analyze" l0.gmt l1.gmt --by rank
has out "12 kernel launches, kernel times not collected (GMEMPROF_KERNELS=launch)"
if grep -q " 0 ns" out; then fail "ranks in launch mode: a kernel time of 0 ns: $(cat out)"; fi
expect 0 "ranks in launch mode (csv)" "$analyze" l0.gmt l1.gmt --format csv
has out " kernels=12 kernel_ns= dropped=0"
expect 0 "ranks in launch mode (json)" "$analyze" l0.gmt l1.gmt --by rank --format json
tr -d ' \n' <out >flat
has flat '"kernels":12,"kernel_ns":null,"dropped":0'
expect 0 "ranks with kernel times (csv)" "$analyze" r0.gmt r1.gmt --format csv
if grep -q "kernel_ns= " out; then fail "ranks with kernel times: kernel_ns empty: $(grep totals out)"; fi

# ---- 13: streams ----------------------------------------------------------------
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null || fail "$1 is not JSON"; }
printf 'earlier line\n' >log.txt
"$analyze" t.gmt --chrome /dev/stdout >>log.txt 2>err || fail "--chrome /dev/stdout >>log.txt: $(cat err)"
[ "$(head -n 1 log.txt)" = "earlier line" ] || fail "--chrome /dev/stdout >>log.txt lost the earlier line"
tail -n +2 log.txt >appended.json && json_ok appended.json
has err "wrote /dev/stdout"
"$analyze" t.gmt --chrome /dev/fd/1 >fd1.json 2>err || fail "--chrome /dev/fd/1: $(cat err)"
json_ok fd1.json
"$analyze" t.gmt --chrome - 2>err | cat >piped.json || fail "--chrome - into a pipe: $(cat err)"
json_ok piped.json
[ ! -e ./- ] || fail "--chrome - wrote a file named -"
# the report and an export on stdout: refused, stdout untouched
expect 2 "-f json --chrome /dev/stdout" "$analyze" t.gmt -f json --chrome /dev/stdout
has err "--chrome /dev/stdout writes to standard output, where the report goes too"
[ ! -s out ] || fail "-f json --chrome /dev/stdout wrote: $(head -c 200 out)"
expect 2 "--insights --chrome /dev/stdout" "$analyze" t.gmt --insights --chrome /dev/stdout
expect 2 "-f csv --chrome out (stdout's file)" "$analyze" t.gmt -f csv --chrome out
# standard input's trace as an output: refused, the trace unchanged
cp t.gmt in.gmt && cp t.gmt in.orig
"$analyze" - --chrome /dev/stdin <in.gmt >out 2>err
[ $? -eq 2 ] || fail "- --chrome /dev/stdin: exit not 2: $(cat err)"
has err "the output /dev/stdin is the trace - (standard input)"
cmp -s in.gmt in.orig || fail "- --chrome /dev/stdin <in.gmt changed in.gmt"
"$analyze" - --chrome in.gmt <in.gmt >out 2>err
[ $? -eq 2 ] || fail "- --chrome in.gmt <in.gmt: exit not 2: $(cat err)"
cmp -s in.gmt in.orig || fail "- --chrome in.gmt <in.gmt changed in.gmt"
cat in.gmt | "$analyze" - --chrome /dev/stdin >out 2>err
[ $? -eq 2 ] || fail "a pipe as TRACE - and --chrome /dev/stdin: $(cat err)"
expect 2 "--diff - --chrome /dev/stdin" sh -c '"$1" t.gmt --diff - --chrome /dev/stdin <in.gmt' sh "$analyze"
cmp -s in.gmt in.orig || fail "--diff - --chrome /dev/stdin changed in.gmt"
# a full device: the errno itself
expect 1 "--chrome /dev/full" "$analyze" t.gmt --chrome /dev/full
has err "writing /dev/full failed: No space left on device"
# a directory as TRACE
expect 1 "a directory as TRACE" "$analyze" sub
has err "cannot open sub: Is a directory"
# the export's directory removed while the run goes on (the timeline, a
# FIFO, holds the run until the test reads it): a failure, no "wrote"
mkdir -p gone && rm -f tl.svg && mkfifo tl.svg
# (timeout: a gmem-analyze that opened the FIFO early would wait forever)
timeout 120 "$analyze" t.gmt --chrome gone/x.json --timeline tl.svg >out 2>err &
pid=$!
while [ ! -e gone/x.json ] && kill -0 $pid 2>/dev/null; do :; done
if [ -e gone/x.json ]; then
    rm -rf gone
    cat tl.svg >/dev/null
    wait $pid
    rc=$?
    [ $rc -eq 1 ] || fail "an export whose directory went: exit $rc, expected 1: $(cat err)"
    has err "gone/x.json was written but is not there now (No such file or directory)"
    if grep -q "wrote gone/x.json" out err; then fail "said it wrote gone/x.json: $(cat out)"; fi
else
    wait $pid
    fail "gone/x.json never appeared: $(cat err)"
fi

# ---- 14: names from a trace ----------------------------------------------------------
cp "$tracedir/hostile.gmt" h.gmt || exit 1
raw_ctl() { python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(any(c<32 and c!=10 or c==127 for c in d))' "$1" ||
    fail "$2: a raw control byte in $1"; }
utf8() { python3 -c 'import sys; open(sys.argv[1],"rb").read().decode("utf-8")' "$1" 2>/dev/null || fail "$1 is not UTF-8"; }
long='autograd::engine::evaluate_function: NativeLayerNormBackward0'
expect 0 "hostile names (table)" "$analyze" h.gmt --by kernel
raw_ctl out table; utf8 out
has out 'evil\x1b[2J\r\nkernel'
has out 'on host\x1b]0;owned\x07\n#x,'
has out 'dev0 (GPU\r\n'
if grep -q '^kernel.*name' out; then fail "a name broke a line of the table: $(cat out)"; fi
expect 0 "hostile names (table, by range)" "$analyze" h.gmt --by range
has out 'autograd::engine::evaluate_f...ion: NativeLayerNormBackward0'
expect 0 "hostile names (csv)" "$analyze" h.gmt --format csv
raw_ctl out csv; utf8 out
grep -v '^#' out >rows.csv
[ "$(wc -l <rows.csv)" -eq 5 ] || fail "csv: a header and 4 rows expected: $(cat rows.csv)"
has rows.csv "'=cmd|' /C calc'!A0,"
has rows.csv "'-2+3,"
has rows.csv "'@SUM(A1),"
has rows.csv 'evil\x1b[2J\r\nkernel'
has out "# live_at_peak.dev0.range: name=$long bytes=1048576 count=1"
has out 'host="host\x1b]0;owned\x07\n#x"'
expect 0 "hostile names (csv, by range)" "$analyze" h.gmt --by range --format csv
has out "$long,"
expect 0 "hostile names (json, by range)" "$analyze" h.gmt --by range --format json
json_ok out; utf8 out
has out "\"$long\""
if grep -qF 'evaluate_f...' out; then fail "json elides a name: $(grep -F 'evaluate_f...' out)"; fi
expect 0 "hostile names (json)" "$analyze" h.gmt --format json
has out 'kernel\ufffd\ufffdname'
expect 0 "hostile names (svg, html, chrome)" "$analyze" h.gmt --timeline h.svg --chrome h.json
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' h.svg 2>/dev/null || fail "h.svg does not parse"
has h.svg "kernel$(printf '\357\277\275\357\277\275')name"
json_ok h.json; utf8 h.json
expect 0 "hostile names (svg, json report)" "$analyze" h.gmt --timeline h2.svg --format json
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' h2.svg 2>/dev/null || fail "h2.svg does not parse"
expect 0 "hostile names (html)" "$analyze" h.gmt --timeline h.html
utf8 h.html
# the --diff A:/B: lines name files: escaped
evil=$(printf 'a\033[2Jb\rc.gmt')
cp h.gmt "$evil"
expect 0 "--diff of a file with ESC in its name" "$analyze" "$evil" --diff h.gmt
raw_ctl out diff
has out 'A: a\x1b[2Jb\rc.gmt'

# ---- 15: sizes that would wrap the totals ----------------------------------------------
# taken: 2^61 + (2^61 - 2 MiB) + 1 MiB allocated = 2^62 - 1 MiB = 4611686018426339328,
# 1 MiB freed, 2^62 - 2 MiB = 4611686018425290752 leaked; refused: 2^63, 2^63, 2^61
expect 0 "sizes of 2^63" "$analyze" "$tracedir/huge.gmt" --format csv
has out "alloc_bytes=4611686018426339328 alloc_count=3 freed_bytes=1048576 free_count=1 leaked_bytes=4611686018425290752 leaked_count=2"
has out "# peak.dev0: bytes=4611686018426339328 "
has out "# note: records refused as damaged: 3, whose sizes would take the trace's past 4 EiB in all"
# three such ranks: 3 * (2^62 - 1 MiB) = 13835058055279017984, below 2^64
cp "$tracedir/huge.gmt" hg0.gmt && cp "$tracedir/huge.gmt" hg1.gmt && cp "$tracedir/huge.gmt" hg2.gmt
expect 0 "three ranks of huge sizes" "$analyze" hg0.gmt hg1.gmt hg2.gmt --format csv
has out "# totals: baseline_bytes=0 alloc_bytes=13835058055279017984 alloc_count=9 freed_bytes=3145728 free_count=3"

exit $failed
