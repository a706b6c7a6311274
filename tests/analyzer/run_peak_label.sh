#!/bin/sh
# run_peak_label.sh ANALYZE TRACE
# The Peak line names the same kernel with and without --full-names: the
# short label's row of the kernel table (-n 0) and the full name's row of
# the --full-names table hold the same numbers.
set -u
analyze=$1 trace=$2
short=$("$analyze" "$trace" -n 0) || exit 1
full=$("$analyze" "$trace" -n 0 --full-names) || exit 1
peak_kernel() { printf '%s\n' "$1" | sed -n 's/^Peak .*; kernel \(.*\); range .*/\1/p' | head -n 1; }
# the numbers of the table row whose name column is $2 (name, two blanks)
row_of() {
    printf '%s\n' "$1" | awk -v k="$2" 'index($0, k "  ") == 1 { n++; r = substr($0, length(k) + 1) }
        END { if (n != 1) exit 1; gsub(/ +/, " ", r); print r }'
}
ks=$(peak_kernel "$short")
kf=$(peak_kernel "$full")
[ -n "$ks" ] && [ -n "$kf" ] || { echo "no kernel on the Peak line of $trace" >&2; exit 1; }
rs=$(row_of "$short" "$ks") || { echo "the Peak's kernel '$ks' is not exactly one row of the kernel table" >&2; exit 1; }
rf=$(row_of "$full" "$kf") || { echo "the Peak's kernel '$kf' (--full-names) is not exactly one row of the kernel table" >&2; exit 1; }
if [ "$rs" != "$rf" ]; then
    echo "the Peak names '$ks' (row:$rs) but with --full-names '$kf' (row:$rf): not one kernel" >&2
    exit 1
fi
echo "ok: $ks"
