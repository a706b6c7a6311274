#!/bin/sh
# run_long_names.sh ANALYZE MKBIG DIR
# 600 distinct kernel names of 64 KiB, plain and mangled: shortening is
# linear in a name's length and analyses only a label's ends, so the
# reports take well under a second here (ctest's TIMEOUT is the bound; the
# quadratic shortening took 32 s for both). Every label is unique.
set -u
analyze=$1 mkbig=$2 dir=$3
mkdir -p "$dir" || exit 1
for shape in plain mangled; do
    t="$dir/long_$shape.gmt"
    "$mkbig" names "$t" 600 65536 "$shape" || exit 1
    "$analyze" "$t" -n 0 >"$dir/long_$shape.out" || { echo "gmem-analyze $t failed" >&2; exit 1; }
    # the kernel table's 600 rows: 600 different labels
    rows=$(sed -n '/^Kernels ranked/,/^$/p' "$dir/long_$shape.out" | tail -n +3 | sed '/^$/d' |
           sed 's/  .*//' | sort -u | wc -l)
    if [ "$rows" -ne 600 ]; then
        echo "$shape: $rows distinct labels in the kernel table, expected 600" >&2
        exit 1
    fi
done
echo "ok"
