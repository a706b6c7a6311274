#!/bin/sh
# man_test.sh MANGEN SRCDIR TOOL PAGE [TOOL PAGE...]
# The generator on a fixed help text and settings table (mangen_in.txt,
# mangen_env.md) gives the expected page, byte for byte; each built page names every long option its tool's --help lists;
# groff, where installed, reads each page without a warning.
set -u
mangen=$1 src=$2
shift 2
status=0
fail() { echo "man test: $*" >&2; status=1; }
out=$(mktemp) || exit 1
trap 'rm -f "$out" "$out.help" "$out.md" "$out.err"' EXIT
"$mangen" --env "$src/mangen_env.md" "Variables; § sections: see the guide." demo 1 9.9 "a demo tool" "other(1)" \
    <"$src/mangen_in.txt" >"$out" || fail "gmp-mangen exited $?"
diff -u "$src/mangen_expected.1" "$out" >&2 ||
    fail "gmp-mangen's page of mangen_in.txt and mangen_env.md differs from mangen_expected.1"
# a table without the settings header is refused
printf '| a | b |\n|---|---|\n| x | y |\n' >"$out.md"
if "$mangen" --env "$out.md" "intro" demo 1 9.9 "a demo tool" <"$src/mangen_in.txt" >"$out" 2>"$out.err"; then
    fail "gmp-mangen accepted a file with no settings table"
fi
grep -q "has no settings table" "$out.err" || fail "gmp-mangen's message for no settings table: $(cat "$out.err")"
while [ $# -ge 2 ]; do
    tool=$1 page=$2
    shift 2
    "$tool" --help >"$out.help" || fail "$tool --help exited $?"
    opts=$(grep -E '^ {1,7}-' "$out.help" | grep -oE -- '--[a-z][a-z-]*' | sort -u)
    [ -n "$opts" ] || fail "no long option found in $tool --help"
    for o in $opts; do
        esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
        grep -q -- "$esc" "$page" || fail "$page does not name $o (in $tool --help)"
    done
    if command -v groff >/dev/null 2>&1; then
        warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
        [ -z "$warn" ] || fail "groff warns on $page: $warn"
    fi
done
exit $status
