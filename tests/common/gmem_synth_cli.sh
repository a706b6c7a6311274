#!/bin/sh
# gmem-synth command line: usage errors exit 2 with a one-line message on
# stderr, --help exits 0 on stdout, a written trace reads back complete and
# the summary reports bytes per event.
# usage: gmem_synth_cli.sh GMEM_SYNTH GMT_DUMP WORKDIR
synth="$1"; dump="$2"; dir="$3"
fail=0
mkdir -p "$dir" || exit 1
expect() { # expect CODE DESCRIPTION -- command...
    want="$1"; what="$2"; shift 3
    "$@" >"$dir/out" 2>"$dir/err"; got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, want $want"; cat "$dir/err"; fail=1
    fi
}
expect 2 "no arguments" -- "$synth"
grep -q "events N\|--events" "$dir/err" || { echo "FAIL: no-argument message"; fail=1; }
expect 2 "bad number" -- "$synth" --events abc -o "$dir/t.zst"
grep -q "invalid value for --events" "$dir/err" || { echo "FAIL: bad number message"; cat "$dir/err"; fail=1; }
expect 2 "negative number" -- "$synth" --events -5 -o "$dir/t.zst"
expect 2 "zero events" -- "$synth" --events 0 -o "$dir/t.zst"
expect 2 "level out of range" -- "$synth" --events 100 --level 30 -o "$dir/t.zst"
expect 2 "bad schedule" -- "$synth" --events 100 --schedule 1,1 -o "$dir/t.zst"
expect 2 "schedule too long" -- "$synth" --events 100 --schedule 0,0,1001 -o "$dir/t.zst"
grep -q "each 0..1000" "$dir/err" || { echo "FAIL: schedule message gives no range"; cat "$dir/err"; fail=1; }
expect 2 "unknown option" -- "$synth" --bogus
grep -q "unknown option" "$dir/err" || { echo "FAIL: unknown option message"; fail=1; }
expect 2 "missing value" -- "$synth" --events
expect 2 "missing output" -- "$synth" --events 100
expect 2 "stray argument" -- "$synth" --events 100 -o "$dir/t.zst" extra
expect 0 "help" -- "$synth" --help
grep -q "usage: gmem-synth" "$dir/out" || { echo "FAIL: --help prints usage on stdout"; fail=1; }
expect 1 "unwritable path" -- "$synth" --events 100 -o /nonexistent/dir/t.zst
grep -q "cannot write" "$dir/err" || { echo "FAIL: unwritable message"; cat "$dir/err"; fail=1; }
expect 0 "write" -- "$synth" --events 5k --seed 3 -o "$dir/t.zst"
grep -q "bytes/event" "$dir/err" || { echo "FAIL: summary has no bytes/event"; cat "$dir/err"; fail=1; }
expect 0 "read back" -- "$dump" "$dir/t.zst" --count
grep -q "complete trace" "$dir/err" || { echo "FAIL: trace not complete"; cat "$dir/err"; fail=1; }
expect 0 "steps" -- "$synth" --steps 7 --layers 2 -q -o "$dir/s.zst"
[ -s "$dir/err" ] && { echo "FAIL: --quiet printed"; cat "$dir/err"; fail=1; }
"$dump" "$dir/s.zst" > "$dir/s.txt" 2>/dev/null
n=$(grep -c "^step " "$dir/s.txt")
[ "$n" -eq 7 ] || { echo "FAIL: --steps 7 wrote $n STEP records"; fail=1; }
expect 0 "stdout" -- sh -c "\"$synth\" --events 1000 -q -o - > \"$dir/p.zst\""
expect 0 "stdout trace reads back" -- "$dump" "$dir/p.zst" --count
expect 0 "no-write" -- "$synth" --events 1M --no-write
grep -q "M events/s" "$dir/err" || { echo "FAIL: --no-write summary"; fail=1; }
expect 0 "rank" -- "$synth" --steps 4 --layers 1 --rank 5 --world-size 8 -q -o "$dir/r.zst"
"$dump" "$dir/r.zst" 2>/dev/null | grep -q "^header .* rank=5 local_rank=5 world_size=8" || { echo "FAIL: --rank header"; fail=1; }
"$dump" "$dir/r.zst" 2>/dev/null | grep -q "^device .*device=5 " || { echo "FAIL: --rank device"; fail=1; }
expect 2 "rank outside the world" -- "$synth" --steps 4 --rank 8 --world-size 8 -o "$dir/r.zst"
grep -q "not below --world-size 8" "$dir/err" || { echo "FAIL: rank/world message"; cat "$dir/err"; fail=1; }
expect 2 "bad world size" -- "$synth" --steps 4 --world-size 0 -o "$dir/r.zst"
rm -rf "$dir"
[ "$fail" -eq 0 ] && echo "gmem_synth_cli: ok"
exit $fail
