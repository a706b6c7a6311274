#!/bin/sh
# deb_test.sh CPACK BUILD WORK TRACE LICENSE
# Builds the .deb of BUILD with `cpack -G DEB`, checks its Depends, unpacks
# it into a fresh root with dpkg -x and runs the packaged gmem-analyze on
# TRACE (samples/traces/naive.zst); when the package has the launcher, the
# packaged launcher must give the profiled command the packaged library.
# The package holds usr/share/doc/gmemprof/copyright (Debian's machine-
# readable form, LICENSE's terms), changelog.gz, the guides, gzipped man
# pages and stripped ELF files (readelf, where installed). Where lintian is
# installed, any E: line it reports fails the test; without it that part is
# skipped with a line saying so.
# Exit 77 (skipped) without dpkg.
set -eu
cpack=$1 build=$2 work=$3 trace=$4 license=$5
fail() { echo "deb test: $*" >&2; exit 1; }
command -v dpkg >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1 ||
    { echo "deb test: no dpkg/dpkg-deb here: skipped"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
deb=$(find "$work/out" -maxdepth 1 -name 'gmemprof_*.deb' | head -n 1)
[ -f "$deb" ] || fail "cpack wrote no gmemprof_*.deb in $work/out"
depends=$(dpkg-deb -f "$deb" Depends)
case "$depends" in
    *libzstd1*) ;;
    *) fail "$deb: Depends '$depends' lacks libzstd1" ;;
esac
case "$depends" in
    *cuda* | *cupti*) fail "$deb: Depends '$depends' names CUDA (a runtime need, not a dependency)" ;;
esac
root=$work/root
dpkg -x "$deb" "$root" || fail "dpkg -x $deb failed"
analyze=$root/usr/bin/gmem-analyze
[ -x "$analyze" ] || fail "$deb has no usr/bin/gmem-analyze"
"$analyze" --version | grep -q '^gmem-analyze [0-9]' || fail "packaged gmem-analyze --version"
"$analyze" "$trace" >"$work/report.txt" 2>"$work/report.err" ||
    { cat "$work/report.err" >&2; fail "packaged gmem-analyze on $trace exited $?"; }
grep -q "peak" "$work/report.txt" || fail "no peak in the report of $trace"
doc=$root/usr/share/doc/gmemprof
for f in copyright changelog.gz user-guide.md analyzer.md attribution.md troubleshooting.md; do
    [ -f "$doc/$f" ] || fail "$deb has no usr/share/doc/gmemprof/$f"
done
head -n 1 "$doc/copyright" | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ||
    fail "usr/share/doc/gmemprof/copyright is not in Debian's machine-readable format (no Format: line)"
grep -q '^License: MIT$' "$doc/copyright" || fail "usr/share/doc/gmemprof/copyright has no 'License: MIT'"
sed -n '/^Permission is hereby granted/,$p' "$license" | sed 's/^$/./; s/^/ /' >"$work/license.expected"
sed -n '/^ Permission is hereby granted/,$p' "$doc/copyright" | cmp -s "$work/license.expected" - ||
    fail "usr/share/doc/gmemprof/copyright does not carry the terms of $license"
gzip -dc "$doc/changelog.gz" | head -n 1 | grep -q "^gmemprof ($(dpkg-deb -f "$deb" Version)) " ||
    fail "usr/share/doc/gmemprof/changelog.gz does not start with this version's entry"
for m in "$root"/usr/share/man/man1/*; do
    case $m in
        *.1.gz) gzip -t "$m" || fail "$m is not a valid gzip file" ;;
        *) fail "$deb has an uncompressed man page: ${m#"$root"}" ;;
    esac
done
[ -f "$root/usr/share/man/man1/gmem-analyze.1.gz" ] || fail "$deb has no gmem-analyze man page"
if command -v readelf >/dev/null 2>&1; then
    for f in $(find "$root/usr" -type f \( -perm -u+x -o -name '*.so' \)); do
        if readelf -S "$f" 2>/dev/null | grep -q '\.symtab'; then
            fail "${f#"$root"} in $deb is not stripped (it has a .symtab)"
        fi
    done
fi
# The guides that --help names are where the package puts them, when the
# build was configured for the package's prefix (cmake/package.cmake).
for d in $("$analyze" --help | grep -o '/[^ ]*/share/doc/gmemprof/[A-Za-z0-9_-]*\.md' | sort -u); do
    case $d in
        /usr/share/doc/gmemprof/*) [ -f "$root$d" ] || fail "the packaged gmem-analyze --help names $d, not in $deb" ;;
        *) echo "deb test: $build is configured for the guides in ${d%/*}, not /usr/share/doc/gmemprof:" \
                "the package's --help names them there (configure with -DCMAKE_INSTALL_PREFIX=/usr to build" \
                "a package)"
            break ;;
    esac
done
if [ -x "$root/usr/bin/gmemprof" ]; then
    lib=$(find "$root/usr" -name libgmemprof.so | head -n 1)
    [ -f "$lib" ] || fail "$deb has the launcher but no libgmemprof.so"
    got=$(env -u GMEMPROF_LIB "$root/usr/bin/gmemprof" -q -- sh -c 'echo "$CUDA_INJECTION64_PATH"') ||
        fail "the packaged launcher exited $?"
    [ "$got" = "$(realpath "$lib")" ] || fail "the packaged launcher gave CUDA_INJECTION64_PATH=$got, not $lib"
fi
if command -v lintian >/dev/null 2>&1; then
    lintian --fail-on none "$deb" >"$work/lintian.txt" 2>&1 ||
        { cat "$work/lintian.txt" >&2; fail "lintian could not check $deb"; }
    if grep -q '^E:' "$work/lintian.txt"; then
        grep '^E:' "$work/lintian.txt" >&2
        fail "lintian reports errors on $deb (lintian -i $deb explains each)"
    fi
    echo "deb test: lintian: no error, $(grep -c '^W:' "$work/lintian.txt") warnings"
    grep '^W:' "$work/lintian.txt" || true
else
    echo "deb test: lintian is not installed: the package's policy check was skipped (apt-get install lintian)"
fi
echo "deb test: $(basename "$deb") (Depends: $depends) unpacked and run"
