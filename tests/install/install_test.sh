#!/bin/sh
# install_test.sh CMAKE BUILD WORK CC [E2E_TEST APP SEARCH]
# Installs BUILD into WORK/prefix with `cmake --install`, then checks the
# installed tree: gmem-analyze runs; a program compiles against the API
# through gmemprof.pc and through find_package(gmemprof); and, given the
# end-to-end test programs (a build with the profiler), the installed
# launcher profiles the fake-CUPTI app with the library it finds on its own,
# in lib/ and in lib64/, and says where it looked when there is none.
# LD_LIBRARY_PATH must hold the fake CUPTI (tests/profiler/e2e.cmake).
set -eu
cmake=$1 build=$2 work=$3 cc=$4
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "install test: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
p=$work/prefix
"$cmake" --install "$build" --prefix "$p" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log" >&2; fail "cmake --install $build --prefix $p failed"; }
for f in bin/gmem-analyze include/gmemprof/gmemprof.h share/man/man1/gmem-analyze.1 \
    share/bash-completion/completions/gmem-analyze; do
    [ -f "$p/$f" ] || fail "$f is not installed in $p"
done
"$p/bin/gmem-analyze" --version | grep -q '^gmem-analyze [0-9]' || fail "installed gmem-analyze --version"

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
[ $# -ge 7 ] && expect_launcher=ON
"$cmake" -S "$here/consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$p" \
    -DCMAKE_C_COMPILER="$cc" -DEXPECT_LAUNCHER=$expect_launcher >"$work/consumer.log" 2>&1 &&
    "$cmake" --build "$work/consumer-build" >>"$work/consumer.log" 2>&1 ||
    { cat "$work/consumer.log" >&2; fail "the CMake consumer does not build against $p"; }
[ "$("$work/consumer-build/consumer")" = "consumer ok" ] || fail "the CMake consumer did not run"

[ $# -ge 7 ] || { echo "install test: analyzer-only tree checked (no profiler built)"; exit 0; }
e2e=$5 app=$6 search=$7
lib=$(find "$p" -name libgmemprof.so | head -n 1)
[ -f "$lib" ] || fail "libgmemprof.so is not installed in $p"
[ -x "$p/bin/gmemprof" ] || fail "bin/gmemprof is not installed in $p"
[ -f "$p/share/man/man1/gmemprof.1" ] || fail "the gmemprof man page is not installed"
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
