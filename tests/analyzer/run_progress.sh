#!/bin/sh
# run_progress.sh ANALYZE SYNTH WORKDIR
# The progress line appears on a terminal (a pseudo-terminal made by
# script(1), util-linux) and is erased there; it never appears in a pipe,
# with TERM=dumb or with --no-progress; --progress writes plain lines to a
# pipe. GMEM_ANALYZE_TEST_PROGRESS_AFTER_MS=0 (test-only) removes the first
# second in which nothing is shown, so a short run shows the line: the
# first look at the clock comes after 65,536 records, and the trace has
# 200,000, so the line is drawn whatever the machine's speed.
set -u
analyze=$1 synth=$2 dir=$3
if ! command -v script >/dev/null 2>&1; then
    echo "SKIP: no script(1) (util-linux) to make a pseudo-terminal"
    exit 77
fi
mkdir -p "$dir" || exit 1
cd "$dir" || exit 1
rm -f t.zst pty.out pipe.out pipe.err
"$synth" -q --events 200k -o t.zst || exit 1
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }
export GMEM_ANALYZE_TEST_PROGRESS_AFTER_MS=0
cr=$(printf '\r')

# on a terminal: "reading t.zst: ... records/s", rewritten with '\r', then erased
TERM=xterm script -qfec "\"$analyze\" t.zst --top 1" /dev/null >pty.out 2>&1 </dev/null
rc=$?
[ "$rc" -eq 0 ] || bad "under a pty: exit $rc"
grep -q "${cr}reading t.zst: .* of .* MiB (.*%), .* records, .* M records/s" pty.out ||
    bad "no progress line on the terminal: $(od -c pty.out | head -5)"
# erased before the report: '\r', spaces, '\r', then the report's first line
tr '\r' '\n' <pty.out | grep -q '^  *$' || bad "the progress line was not erased"
grep -q "^Peak" pty.out || grep -q "Peak" pty.out || bad "no report after the progress line"

# stderr a pipe: nothing, not even with a terminal's TERM
"$analyze" t.zst --top 1 >pipe.out 2>pipe.err
[ -s pipe.err ] && bad "progress in a pipe: $(cat pipe.err)"
grep -q "records/s" pipe.out && bad "progress on stdout"

# TERM=dumb and --no-progress: nothing on the terminal either
TERM=dumb script -qfec "\"$analyze\" t.zst --top 1" /dev/null >pty.out 2>&1 </dev/null
grep -q "records/s" pty.out && bad "progress with TERM=dumb"
TERM=xterm script -qfec "\"$analyze\" t.zst --top 1 --no-progress" /dev/null >pty.out 2>&1 </dev/null
grep -q "records/s" pty.out && bad "progress with --no-progress"

# --progress into a pipe (a log): plain lines, no '\r', and a last line
"$analyze" t.zst --top 1 --progress >pipe.out 2>pipe.err
grep -q "^gmem-analyze: reading t.zst: .* records/s$" pipe.err || bad "--progress: no line: $(cat pipe.err)"
grep -q "^gmem-analyze: reading t.zst: done in .* s, " pipe.err || bad "--progress: no last line: $(cat pipe.err)"
grep -q "$cr" pipe.err && bad "--progress: a '\\r' in a log"

[ "$fail" -eq 0 ] && echo "progress: ok"
exit "$fail"
