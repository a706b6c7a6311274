#!/bin/sh
# install_test.sh CMAKE BUILD WORK CC SRC [E2E_TEST APP SEARCH]
# Installs BUILD into WORK/prefix with `cmake --install`, then checks the
# installed tree: gmem-analyze runs; the man pages and the guides are there,
# every guide the tools' --help and man pages name among them, and the
# copyright file carries SRC/LICENSE; a program compiles against the API
# through gmemprof.pc and through find_package(gmemprof); and, given the
# end-to-end test programs (a build with the profiler), the installed
# launcher profiles the fake-CUPTI app with the library it finds on its own,
# in lib/ and in lib64/, and says where it looked when there is none.
# LD_LIBRARY_PATH must hold the fake CUPTI (tests/profiler/e2e.cmake).
set -eu
cmake=$1 build=$2 work=$3 cc=$4 src=$5
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "install test: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
p=$work/prefix
"$cmake" --install "$build" --prefix "$p" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; fail "cmake --install $build --prefix $p failed"; }
for f in bin/gmem-analyze include/gmemprof/gmemprof.h share/bash-completion/completions/gmem-analyze \
    share/doc/gmemprof/user-guide.md share/doc/gmemprof/img/timeline-naive.png share/doc/gmemprof/copyright; do
    [ -f "$p/$f" ] || fail "$f is not installed in $p"
done
"$p/bin/gmem-analyze" --version | grep -q '^gmem-analyze [0-9]' || fail "installed gmem-analyze --version"

# man pages, gzipped where gzip is found
man_text() { # tool: the installed page as text
    if [ -f "$p/share/man/man1/$1.1.gz" ]; then gzip -dc "$p/share/man/man1/$1.1.gz"
    elif [ -f "$p/share/man/man1/$1.1" ]; then cat "$p/share/man/man1/$1.1"
    else fail "the $1 man page is not installed in $p/share/man/man1"; fi
}
man_text gmem-analyze >"$work/gmem-analyze.1"
# Every guide that --help or the man page names is installed: the names are
# DOCDIR/NAME.md, DOCDIR being the configured prefix's share/doc/gmemprof.
docs_named() { # tool
    { "$p/bin/$1" --help; man_text "$1" | sed 's/\\-/-/g'; } | grep -o '/share/doc/gmemprof/[A-Za-z0-9_-]*\.md' | sort -u
}
named=$(docs_named gmem-analyze)
[ -n "$named" ] || fail "gmem-analyze --help names no guide in share/doc/gmemprof"
for d in $named; do
    [ -f "$p$d" ] || fail "gmem-analyze names ...$d, which is not installed in $p"
done
# the copyright file carries LICENSE's terms (Debian's form: one space
# before each line, "." for an empty one)
sed -n '/^Permission is hereby granted/,$p' "$src/LICENSE" | sed 's/^$/./; s/^/ /' >"$work/license.expected"
sed -n '/^ Permission is hereby granted/,$p' "$p/share/doc/gmemprof/copyright" >"$work/license.got"
cmp -s "$work/license.expected" "$work/license.got" ||
    { diff -u "$work/license.expected" "$work/license.got" >&2; fail "share/doc/gmemprof/copyright does not carry LICENSE's terms"; }

# pkg-config
pcdir=$(dirname "$(find "$p" -name gmemprof.pc | head -n 1)")
[ -f "$pcdir/gmemprof.pc" ] || fail "no gmemprof.pc installed"
if command -v pkg-config >/dev/null 2>&1; then
    cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags gmemprof) || fail "pkg-config --cflags gmemprof"
    libs=$(PKG_CONFIG_PATH=$pcdir pkg-config --libs gmemprof) || fail "pkg-config --libs gmemprof"
    # shellcheck disable=SC2086 # the flags are words
    "$cc" -std=c11 -Wall -Wextra -Werror $cflags "$here/consumer.c" -o "$work/consumer-pc" $libs ||
        fail "the consumer does not compile with pkg-config's flags: $cflags $libs"
    [ "$("$work/consumer-pc")" = "consumer ok" ] || fail "the pkg-config consumer did not run"
fi

# find_package(gmemprof)
expect_launcher=OFF
[ $# -ge 8 ] && expect_launcher=ON
"$cmake" -S "$here/consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$p" \
    -DCMAKE_C_COMPILER="$cc" -DEXPECT_LAUNCHER=$expect_launcher >"$work/consumer.log" 2>&1 &&
    "$cmake" --build "$work/consumer-build" >>"$work/consumer.log" 2>&1 ||
    { cat "$work/consumer.log" >&2; fail "the CMake consumer does not build against $p"; }
[ "$("$work/consumer-build/consumer")" = "consumer ok" ] || fail "the CMake consumer did not run"

[ $# -ge 8 ] || { echo "install test: analyzer-only tree checked (no profiler built)"; exit 0; }
e2e=$6 app=$7 search=$8
lib=$(find "$p" -name libgmemprof.so | head -n 1)
[ -f "$lib" ] || fail "libgmemprof.so is not installed in $p"
[ -x "$p/bin/gmemprof" ] || fail "bin/gmemprof is not installed in $p"
man_text gmemprof | grep -q '^\.SH ENVIRONMENT' || fail "the gmemprof man page has no ENVIRONMENT section"
for d in $(docs_named gmemprof); do
    [ -f "$p$d" ] || fail "gmemprof names ...$d, which is not installed in $p"
done
case $lib in
    "$p"/libexec/gmemprof/libgmemprof.so) ;;
    *) fail "libgmemprof.so is installed at $lib, not in the private libexec/gmemprof" ;;
esac
[ -f "$p/share/bash-completion/completions/gmemprof" ] || fail "the gmemprof completion is not installed"
# the launcher finds the library beside itself (no --lib, no GMEMPROF_LIB)
unset GMEMPROF_LIB CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH || true
"$e2e" launcher "$app" "$search" "$p/bin/gmemprof" "$lib" "$work/e2e" ||
    fail "the installed launcher did not profile the app with $lib"
trace=$work/e2e/launcher/via-launcher.zst
"$p/bin/gmem-analyze" "$trace" --by alloc >"$work/report.txt" || fail "installed gmem-analyze on $trace"
grep -q "peak" "$work/report.txt" || fail "no peak in the report of $trace"
# ... in lib64 when GNUInstallDirs puts it there
mkdir -p "$p/lib64.moved"
mv "$lib" "$p/lib64.moved/libgmemprof.so"
rm -rf "$p/lib64" && mv "$p/lib64.moved" "$p/lib64"
rm -rf "$work/e2e"
"$e2e" launcher "$app" "$search" "$p/bin/gmemprof" "$p/lib64/libgmemprof.so" "$work/e2e" ||
    fail "the installed launcher did not find $p/lib64/libgmemprof.so"
# ... and with none, it says where it looked and exits 125
rm -f "$p/lib64/libgmemprof.so"
rc=0
"$p/bin/gmemprof" -- true 2>"$work/nolib.err" || rc=$?
[ "$rc" -eq 125 ] || fail "the launcher without a library exited $rc, expected 125"
grep -q "cannot find libgmemprof.so beside the launcher (looked for .*/lib64/libgmemprof.so" "$work/nolib.err" ||
    { cat "$work/nolib.err" >&2; fail "the launcher's message does not list where it looked"; }
echo "install test: installed tree checked, launcher included"
