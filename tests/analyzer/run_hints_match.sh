#!/bin/sh
# run_hints_match.sh ANALYZE SYNTH SCRATCH TRACE...
# The default report's class bytes (JSON "hints") equal those of --insights,
# device by device, on each TRACE and on a gmem-synth trace written to
# SCRATCH: the hints decide the classes in the replay, --insights from its
# own records; both follow one rule. Where --insights speaks categories
# (the bridge's blocks), its "lifetimes" hold the same split.
set -u
analyze=$1 synth=$2 scratch=$3
shift 3
mkdir -p "$scratch" || exit 1
"$synth" --steps 10 --layers 2 -q -o "$scratch/hints_synth.gmt" || exit 1
# class bytes, one "device class bytes" line each
hints() {
    "$analyze" "$1" --format json | awk '
        /"hints": \{/ { h = 1 }
        h && /"device":/ { gsub(/[^0-9]/, ""); d = $0 }
        h && /"(persistent|step_scoped|temporary)_bytes":/ {
            split($0, kv, ":"); k = kv[1]; gsub(/[ "]/, "", k); sub(/_bytes$/, "", k)
            v = kv[2]; gsub(/[^0-9]/, "", v); print d, k, v }
        h && /"shown":/ { exit }'
}
insights() {
    "$analyze" "$1" --insights --format json >"$scratch/insights.json" || return
    grep -q '"lifetimes": {' "$scratch/insights.json" && lt=1 || lt=0
    awk -v lt=$lt '
        /"devices": \[/ { s = 1 }
        s && /^          "device":/ { gsub(/[^0-9]/, ""); d = $0 }
        /"classes": \{/ { in_ = !lt }
        /"lifetimes": \{/ { in_ = lt }
        /"fragmentation": \{/ { in_ = 0 }
        s && in_ && /"(persistent|step-scoped|temporary)": \{/ {
            k = $0; gsub(/[ ":{]/, "", k); sub(/-/, "_", k); want = 1; next }
        s && want && /"bytes":/ { v = $0; gsub(/[^0-9]/, "", v); print d, k, v; want = 0 }
        /"table": \{/ { exit }' "$scratch/insights.json"
}
rc=0
for t in "$@" "$scratch/hints_synth.gmt"; do
    a=$(hints "$t") b=$(insights "$t")
    if [ -z "$a" ] || [ "$a" != "$b" ]; then
        echo "$t: the hints' classes differ from --insights'" >&2
        echo "hints:" >&2; echo "$a" >&2; echo "insights:" >&2; echo "$b" >&2
        rc=1
    else
        echo "$t: $(echo "$a" | tr '\n' ';')"
    fi
done
exit $rc
