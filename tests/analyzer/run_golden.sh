#!/bin/sh
# run_golden.sh ANALYZE TRACEDIR GOLDENDIR NAME EXPECTED_EXIT [ARGS...]
# Runs gmem-analyze ARGS in TRACEDIR (so paths print as given) and compares
# its stdout with GOLDENDIR/NAME.out. GMA_REGEN_GOLDEN=1 rewrites the file
# instead (tests/analyzer/regen_golden.sh does that for all of them).
set -u
analyze=$1 tracedir=$2 golden=$3 name=$4 want=$5
shift 5
out=$(mktemp) || exit 1
trap 'rm -f "$out" "$out.err" "$out.f"' EXIT
(cd "$tracedir" && "$analyze" "$@") >"$out" 2>"$out.err"
rc=$?
# Byte offsets and sizes of the compressed file depend on the zstd build:
# they are masked so the goldens hold on every machine.
sed -E -e 's/byte [0-9]+/byte N/g' -e 's/[0-9]+ bytes, version/N bytes, version/g' \
    -e 's/"file_bytes": [0-9]+/"file_bytes": N/' "$out" >"$out.f" && mv "$out.f" "$out"
if [ "$rc" -ne "$want" ]; then
    echo "gmem-analyze $*: exit $rc, expected $want" >&2
    cat "$out.err" >&2
    exit 1
fi
if [ -n "${GMA_REGEN_GOLDEN:-}" ]; then
    cp "$out" "$golden/$name.out" && echo "regenerated $golden/$name.out"
    exit $?
fi
if [ ! -f "$golden/$name.out" ]; then
    echo "missing golden $golden/$name.out (run tests/analyzer/regen_golden.sh)" >&2
    exit 1
fi
diff -u "$golden/$name.out" "$out" || { echo "output of gmem-analyze $* differs from $name.out" >&2; exit 1; }
