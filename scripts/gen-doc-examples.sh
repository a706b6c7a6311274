#!/usr/bin/env bash
# Regenerates the example outputs in the documentation from the recorded
# traces, so that every number shown in docs/ is real output of the current
# gmem-analyze on samples/traces/*.zst. Run it after re-recording the traces
# or after a change of the analyzer's output, and review the diff.
#
#   scripts/gen-doc-examples.sh [--check] [--analyzer PATH] [FILE.md ...]
#
# FILE.md: the pages to process (default: every docs/*.md holding a marker).
# --analyzer: the gmem-analyze to run (default: $GMEM_ANALYZE, else
#   build/bin/gmem-analyze). Commands run from the repository root.
# --check: change nothing; exit 1 and name the pages whose blocks are stale.
#
# A generated block is everything between a start marker and an end marker,
# each alone on its line:
#
#   <!-- gen: gmem-analyze ARGS [| keep N[,N...]] [| head N] -->
#   ...replaced...
#   <!-- /gen -->
#
# ARGS are split at blanks (no quoting). The block becomes a fenced code
# block: the line "$ build/bin/gmem-analyze ARGS", then the output.
# Filters, applied in order:
#   keep 1,3  keep only these paragraphs of the output (paragraphs are
#             separated by blank lines, numbered from 1); an omitted run of
#             paragraphs shows as one line "…"
#   head N    keep the first N lines of what is left, then "…"
# Before the filters, the recorded command line ("Command" in the summary)
# shows paths inside the recording machine's checkout relative to it
# (/any/where/samples/x.py becomes samples/x.py; likewise build*/), so that
# no page carries one machine's absolute paths.
# Exit status: 0 done (or up to date with --check), 1 stale (--check) or a
# command failed, 2 bad usage or a malformed marker.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=0
analyzer=${GMEM_ANALYZE:-}
files=()
while (($#)); do
    case $1 in
    --check) check=1 ;;
    --analyzer)
        (($# >= 2)) || { echo "gen-doc-examples: --analyzer needs a path" >&2; exit 2; }
        analyzer=$2
        shift
        ;;
    --analyzer=*) analyzer=${1#--analyzer=} ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    -*) echo "gen-doc-examples: unknown option '$1'" >&2; exit 2 ;;
    *) files+=("$1") ;;
    esac
    shift
done
[ -n "$analyzer" ] || analyzer=$root/build/bin/gmem-analyze
case $analyzer in /*) ;; *) analyzer=$PWD/$analyzer ;; esac
if [ ! -x "$analyzer" ]; then
    echo "gen-doc-examples: $analyzer is not an executable; build first" \
         "(cmake -B build && cmake --build build) or pass --analyzer PATH" >&2
    exit 2
fi
cd "$root"
if ((${#files[@]} == 0)); then
    while IFS= read -r f; do files+=("$f"); done < <(grep -l '^<!-- gen: ' docs/*.md || true)
fi
((${#files[@]})) || { echo "gen-doc-examples: no page holds a '<!-- gen: ' marker" >&2; exit 0; }

# Applies "keep LIST" to stdin: the listed paragraphs, "…" for each gap.
keep_paragraphs() {
    awk -v list="$1" '
        BEGIN { n = split(list, k, ","); for (i = 1; i <= n; i++) want[k[i] + 0] = 1 }
        { sub(/[ \t]+$/, "") }
        /^$/ { if (inpar) { inpar = 0 }; next }
        {
            if (!inpar) { par++; inpar = 1; newpar = 1 } else newpar = 0
            if (par in want) {
                if (newpar) {
                    if (par - 1 > last) print "…"
                    else if (printed) print ""
                    last = par
                }
                print; printed = 1
            }
        }
        END { if (par > last) print "…" }'
}

# One block: runs the command of a marker and prints the new block body.
render() {
    local spec=$1 cmd filters f words out
    cmd=${spec%%|*}
    filters=""
    [[ $spec == *"|"* ]] && filters=${spec#*|}
    read -r -a words <<<"$cmd"
    if [ "${words[0]:-}" != gmem-analyze ]; then
        echo "gen-doc-examples: marker '$spec' must start with gmem-analyze" >&2
        return 2
    fi
    if ! out=$("$analyzer" "${words[@]:1}" 2>/dev/null); then
        echo "gen-doc-examples: '$cmd' failed (run it by hand to see why)" >&2
        return 1
    fi
    out=$(printf '%s\n' "$out" | sed -E 's/[ \t]*$//; /^Command /s#(^|[ =])/[^ ]*/((samples|build[^/ ]*)/)#\1\2#g')
    IFS='|' read -r -a fl <<<"$filters"
    for f in "${fl[@]}"; do
        read -r -a words2 <<<"$f"
        ((${#words2[@]})) || continue
        case ${words2[0]} in
        keep) out=$(printf '%s\n' "$out" | keep_paragraphs "${words2[1]:?keep needs a list}") ;;
        head)
            local n=${words2[1]:?head needs a number} total
            total=$(printf '%s\n' "$out" | wc -l)
            if ((total > n)); then out=$(printf '%s\n' "$out" | head -n "$n"; echo "…"); fi
            ;;
        *) echo "gen-doc-examples: unknown filter '${words2[0]}' in '$spec'" >&2; return 2 ;;
        esac
    done
    printf '```\n$ build/bin/%s\n%s\n```\n' "$(echo "$cmd" | sed 's/[ \t]*$//')" "$out"
}

stale=()
for page in "${files[@]}"; do
    [ -f "$page" ] || { echo "gen-doc-examples: no such page $page" >&2; exit 2; }
    tmp=$(mktemp "${page}.gen.XXXXXX")
    trap 'rm -f "$tmp"' EXIT
    inblock=0
    lineno=0
    blocks=0
    while IFS= read -r line || [ -n "$line" ]; do
        lineno=$((lineno + 1))
        if ((inblock)); then
            if [ "$line" = "<!-- /gen -->" ]; then
                printf '%s\n' "$line" >>"$tmp"
                inblock=0
            elif [[ $line == "<!-- gen: "* ]]; then
                echo "gen-doc-examples: $page:$lineno: a gen marker inside an open block" >&2
                exit 2
            fi
            continue
        fi
        printf '%s\n' "$line" >>"$tmp"
        if [[ $line =~ ^'<!-- gen: '(.*)' -->'$ ]]; then
            spec=${BASH_REMATCH[1]}
            rc=0
            body=$(render "$spec") || rc=$?
            if ((rc)); then
                echo "gen-doc-examples: $page:$lineno: block not generated" >&2
                exit "$rc"
            fi
            printf '%s\n' "$body" >>"$tmp"
            inblock=1
            blocks=$((blocks + 1))
        fi
    done <"$page"
    if ((inblock)); then
        echo "gen-doc-examples: $page: a gen block is not closed by <!-- /gen -->" >&2
        exit 2
    fi
    if cmp -s "$tmp" "$page"; then
        rm -f "$tmp"
        echo "gen-doc-examples: $page: $blocks block(s), up to date" >&2
    elif ((check)); then
        rm -f "$tmp"
        stale+=("$page")
    else
        cat "$tmp" >"$page" # keeps the page's mode and links
        rm -f "$tmp"
        echo "gen-doc-examples: $page: $blocks block(s) regenerated" >&2
    fi
    trap - EXIT
done
if ((${#stale[@]})); then
    echo "gen-doc-examples: stale examples in: ${stale[*]} (run scripts/gen-doc-examples.sh)" >&2
    exit 1
fi
