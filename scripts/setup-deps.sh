#!/usr/bin/env bash
# Installs what building and testing gmemprof needs on Debian/Ubuntu, only
# what is missing. CUDA (13.x, with CUPTI) is expected at /usr/local/cuda or
# wherever CMake's FindCUDAToolkit finds it; it is not installed from here, and
# without it only the analyzer is built (cmake/cuda.cmake).
set -euo pipefail
need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_cmd cmake || need+=(cmake)
have_cmd cc || need+=(gcc)
have_cmd pkg-config || need+=(pkg-config)
have_cmd zstd || need+=(zstd)
have_cmd python3 || need+=(python3)
have_cmd make || need+=(make)
have_cmd clang || need+=(clang)
pkg-config --exists libzstd 2>/dev/null || need+=(libzstd-dev)
# gmem-analyze --sqlite (optional at build) and its test's queries
[ -e /usr/include/sqlite3.h ] || pkg-config --exists sqlite3 2>/dev/null || need+=(libsqlite3-dev)
have_cmd sqlite3 || need+=(sqlite3)
# Python's headers and libpython: profiler.unit.pybridge embeds Python
py_inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null || true)
[ -n "$py_inc" ] && [ -e "$py_inc/Python.h" ] || need+=(python3-dev)
# headless Chromium opens the --timeline page in its browser test and
# renders the screenshots (scripts/timeline-screenshots.sh)
have_cmd chromium || have_cmd chromium-browser || need+=(chromium)
# the .deb's policy check (tests/install/deb_test.sh: no lintian error)
have_cmd lintian || need+=(lintian)
# libFuzzer's runtime ships with clang on Debian; LeakSanitizer/ASan with gcc.
if ((${#need[@]})); then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    echo "gmemprof setup: installing ${need[*]}" >&2
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi
if [ ! -e "${CUDA_HOME:-/usr/local/cuda}/include/cupti.h" ] && ! have_cmd nvcc; then
    echo "gmemprof setup: CUDA with CUPTI not found at ${CUDA_HOME:-/usr/local/cuda}: only the" \
         "analyzer will be built; for the profiler install the CUDA toolkit (13.x) or set" \
         "CUDA_HOME / CUDAToolkit_ROOT" >&2
fi
