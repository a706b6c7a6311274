#!/usr/bin/env bash
# The one test command: sets up what is missing, builds a Release tree, an
# ASan+UBSan tree and an analyzer-only tree (CUDA hidden from CMake, as on a
# machine without the toolkit), and runs every CTest test in each but the
# benchmarks (label "bench": timings, not checks; run them with ctest -L
# bench) and the long runs (label "long": minutes each; ctest -L long). GPU tests (label "gpu") skip themselves where no GPU is present.
#   scripts/test.sh            all three configurations
#   scripts/test.sh --fast     Release only
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
run_config() {
    local dir=$1; shift
    cmake -S . -B "$dir" "$@" >/dev/null
    cmake --build "$dir" -j "$jobs"
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" --timeout 600 -LE '^(bench|long)$'
}
run_config build -DCMAKE_BUILD_TYPE=Release
if [ "${1:-}" != "--fast" ]; then
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        run_config build-asan -DCMAKE_BUILD_TYPE=Debug -DGMEMPROF_SANITIZE=ON
    run_config build-nocuda -DCMAKE_BUILD_TYPE=Release -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
    if [ -e build-nocuda/lib/libgmemprof.so ] || [ ! -x build-nocuda/bin/gmem-analyze ]; then
        echo "gmemprof: build-nocuda is not an analyzer-only build (CUDA was not hidden)" >&2
        exit 1
    fi
fi
echo "gmemprof: all tests passed" >&2
