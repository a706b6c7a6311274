#!/bin/sh
# deb_test.sh CPACK BUILD WORK TRACE
# Builds the .deb of BUILD with `cpack -G DEB`, checks its Depends, unpacks
# it into a fresh root with dpkg -x and runs the packaged gmem-analyze on
# TRACE (samples/traces/naive.zst); when the package has the launcher, the
# packaged launcher must give the profiled command the packaged library.
# Exit 77 (skipped) without dpkg.
set -eu
cpack=$1 build=$2 work=$3 trace=$4
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
[ -f "$root/usr/share/man/man1/gmem-analyze.1" ] || fail "$deb has no gmem-analyze man page"
if [ -x "$root/usr/bin/gmemprof" ]; then
    lib=$(find "$root/usr" -name libgmemprof.so | head -n 1)
    [ -f "$lib" ] || fail "$deb has the launcher but no libgmemprof.so"
    got=$(env -u GMEMPROF_LIB "$root/usr/bin/gmemprof" -q -- sh -c 'echo "$CUDA_INJECTION64_PATH"') ||
        fail "the packaged launcher exited $?"
    [ "$got" = "$(realpath "$lib")" ] || fail "the packaged launcher gave CUDA_INJECTION64_PATH=$got, not $lib"
fi
echo "deb test: $(basename "$deb") (Depends: $depends) unpacked and run"
