#!/bin/sh
# Keeps docs/trace-format.md equal to what the code prints: the worked
# example (gmt-example) and the field table (gmt-example --fields).
# usage: doc_sync.sh GMT_EXAMPLE DOC [--update]
#   without --update: exit 1 and show a diff when the document is stale.
ex="$1"; doc="$2"; mode="$3"
tmp="${TMPDIR:-/tmp}/doc_sync.$$"
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
"$ex" > "$tmp/example.txt" || { echo "gmt-example failed"; exit 1; }
"$ex" --fields | sed '/^$/,$d' > "$tmp/fields.txt" || exit 1
# the document with both blocks regenerated
awk -v ex="$tmp/example.txt" -v fl="$tmp/fields.txt" '
  /<!-- example:end -->/ { skip = 0 }
  /<!-- fields:end -->/  { skip = 0 }
  !skip { print }
  /<!-- example:begin -->/ { print "```"; while ((getline l < ex) > 0) print l; print "```"; skip = 1 }
  /<!-- fields:begin -->/  { while ((getline l < fl) > 0) print l; skip = 1 }
' "$doc" > "$tmp/doc.md"
if [ "$mode" = "--update" ]; then
    cp "$tmp/doc.md" "$doc" && echo "updated $doc"
    exit 0
fi
if ! diff -u "$doc" "$tmp/doc.md" > "$tmp/diff"; then
    echo "docs/trace-format.md is out of date with the code; run:"
    echo "  sh tests/common/doc_sync.sh build/bin/gmt-example docs/trace-format.md --update"
    head -60 "$tmp/diff"
    exit 1
fi
echo "doc_sync: ok"
