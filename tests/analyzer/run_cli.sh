#!/bin/sh
# run_cli.sh ANALYZE TRACEDIR EXPECTED_EXIT PATTERN [ARGS...]
# The exit status must be EXPECTED_EXIT and stderr (or, for exit 0 with
# --help/--version, stdout) must contain PATTERN (a fixed string).
set -u
analyze=$1 tracedir=$2 want=$3 pattern=$4
shift 4
out=$(mktemp) || exit 1
trap 'rm -f "$out" "$out.err"' EXIT
(cd "$tracedir" && "$analyze" "$@") >"$out" 2>"$out.err"
rc=$?
if [ "$rc" -ne "$want" ]; then
    echo "gmem-analyze $*: exit $rc, expected $want" >&2
    cat "$out.err" >&2
    exit 1
fi
if ! grep -qF -- "$pattern" "$out.err" "$out"; then
    echo "gmem-analyze $*: no '$pattern' in its output:" >&2
    cat "$out.err" "$out" >&2
    exit 1
fi
# usage errors and bad input leave stdout empty: no half report (exit 3 is a
# report of an incomplete trace: made in full)
if [ "$want" -ne 0 ] && [ "$want" -ne 3 ] && [ -s "$out" ]; then
    echo "gmem-analyze $*: wrote to stdout on failure" >&2
    exit 1
fi
exit 0
