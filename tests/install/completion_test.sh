#!/bin/bash
# completion_test.sh SRCDIR ANALYZE [LAUNCHER]
# Sources completion/gmem-analyze.bash (and gmemprof.bash) in a plain bash
# (no bash-completion package) and checks what it offers: the options are
# those of --help, the --by/--sort/--format values those the tool's error
# message lists, trace files are *.zst, and --by=VALUE works.
set -u
export LC_ALL=C
src=$1 analyze=$2 launcher=${3:-}
status=0
fail() { echo "completion test: $*" >&2; status=1; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
# shellcheck source=/dev/null
. "$src/completion/gmem-analyze.bash" || exit 1
# complete WORDS...: the function's COMPREPLY for the last word, sorted, one line
complete_line() {
    local fn=$1
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMPREPLY=()
    "$fn"
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() { # expect WANT FN WORDS...
    local want=$1 got
    shift
    got=$(complete_line "$@")
    [ "$got" = "$want" ] || fail "'${*:2}': offered '$got', expected '$want'"
}
sorted_words() { tr ', ' '\n\n' | grep -v '^$' | sort | tr '\n' ' ' | sed 's/ $//'; }

complete -p gmem-analyze 2>/dev/null | grep -q -- '-F _gmem_analyze' || fail "no 'complete -F _gmem_analyze gmem-analyze'"
# the values the tool accepts, from its own error message
for opt in by sort format layer; do
    msg=$("$analyze" x --$opt bogus 2>&1 >/dev/null)
    want=$(printf '%s' "$msg" | sed -n "s/.*--$opt: 'bogus' is not one of \([a-z, ]*\).*/\1/p" | sorted_words)
    [ -n "$want" ] || { fail "no value list in: $msg"; continue; }
    expect "$want" _gmem_analyze gmem-analyze t.zst --$opt ""
done
expect "step stream" _gmem_analyze gmem-analyze t.zst --by = st
expect "peak" _gmem_analyze gmem-analyze t.zst -s pe
# the long options are those of --help
want=$("$analyze" --help | grep -E '^ {1,7}-' | grep -oE -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ' | sed 's/ $//')
expect "$want" _gmem_analyze gmem-analyze --
expect "--full-names" _gmem_analyze gmem-analyze t.zst --fu
# traces: *.zst files and directories, not other files
mkdir -p "$work/d/sub" && touch "$work/d/a.zst" "$work/d/b.txt" "$work/d/c.html"
(cd "$work/d" && expect "a.zst sub" _gmem_analyze gmem-analyze "") || status=1
(cd "$work/d" && expect "a.zst sub" _gmem_analyze gmem-analyze a.zst --diff "") || status=1
(cd "$work/d" && expect "c.html sub" _gmem_analyze gmem-analyze a.zst --timeline "") || status=1
expect "" _gmem_analyze gmem-analyze t.zst --top ""

if [ -n "$launcher" ]; then
    # shellcheck source=/dev/null
    . "$src/completion/gmemprof.bash" || exit 1
    complete -p gmemprof 2>/dev/null | grep -q -- '-F _gmemprof' || fail "no 'complete -F _gmemprof gmemprof'"
    want=$("$launcher" --help | grep -E '^ {1,7}-' | grep -oE -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ' | sed 's/ $//')
    expect "-- $want" _gmemprof gmemprof --
    msg=$("$launcher" --kernels bogus -- true 2>&1 >/dev/null)
    want=$(printf '%s' "$msg" | sed -n 's/.*(accepted: \([a-z, ]*\), or .*/\1/p' | sorted_words)
    [ -n "$want" ] || fail "no mode list in: $msg"
    expect "$want" _gmemprof gmemprof --kernels ""
    # the command after '--', and after the options' values
    got=$(complete_line _gmemprof gmemprof -o t.zst -- ech)
    [[ " $got " == *" echo "* ]] || fail "'gmemprof -o t.zst -- ech': offered '$got', no echo"
    got=$(complete_line _gmemprof gmemprof --kernels gpu ech)
    [[ " $got " == *" echo "* ]] || fail "'gmemprof --kernels gpu ech': offered '$got', no echo"
    (cd "$work/d" && expect "b.txt" _gmemprof gmemprof -- cat b) || status=1
fi
exit $status
