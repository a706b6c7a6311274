#!/bin/sh
# run_threads.sh SYNTH ANALYZE WORKDIR
# Frames decompressed on 4 threads give the output and exit status of one
# thread, byte for byte: on a whole trace of many small frames, a trace cut
# inside a frame, and one with a damaged byte in a middle frame (where the
# workers stop and the reader goes on alone).
set -u
synth=$1 analyze=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$work" || exit 1
cd "$work" || exit 1
"$synth" --steps 40 --layers 2 --seed 3 --frame-bytes 16k -q -o whole.zst || fail "gmem-synth"
size=$(wc -c <whole.zst)
head -c $((size * 2 / 3)) whole.zst >cut.zst
cp whole.zst damaged.zst
printf '\377\377\377\377' | dd of=damaged.zst bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
for t in whole cut damaged; do
    for view in "" "--by alloc --top 0" "--by step -f csv" "--insights" "-f json"; do
        # shellcheck disable=SC2086
        "$analyze" $t.zst $view --threads 1 >one.out 2>one.err
        one=$?
        # shellcheck disable=SC2086
        "$analyze" $t.zst $view --threads 4 >four.out 2>four.err
        four=$?
        [ "$one" = "$four" ] || fail "$t $view: exit $one with 1 thread, $four with 4"
        cmp -s one.out four.out || fail "$t $view: stdout differs between 1 and 4 threads"
        cmp -s one.err four.err || fail "$t $view: stderr differs between 1 and 4 threads"
        [ -s one.out ] || fail "$t $view: no output"
    done
done
echo "threads ok"
