# Sourced by bench/run_bench.sh and bench/ab_bench.sh (not run on its own):
# the tree's root, the Release build directory, the Python to use, the
# environment every measured process starts from, and the incremental build
# both scripts begin with.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${GM_BUILD_DIR:-$ROOT/build-gpu}
PY=${GM_PYTHON:-python3}
# No injection or allocator setting inherited from the caller's shell: each
# configuration sets exactly what it measures.
clean_env=(env -u CUDA_INJECTION64_PATH -u NVTX_INJECTION64_PATH -u PYTORCH_CUDA_ALLOC_CONF)

# bench_build LOG WHO: configure (Ninja, Release, and $GM_CMAKE_ARGS) and
# build $BUILD, output in LOG; on failure print the log's tail and exit 1
# with WHO in the message.
bench_build() {
    local log=$1 who=$2
    if ! timeout -k 10 300 bash -c "cmake -S '$ROOT' -B '$BUILD' -G Ninja -DCMAKE_BUILD_TYPE=Release ${GM_CMAKE_ARGS:-} >/dev/null && cmake --build '$BUILD' -j $(nproc)" \
        >"$log" 2>&1; then
        tail -30 "$log"
        echo "$who: build failed" >&2
        exit 1
    fi
}
