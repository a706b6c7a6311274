# Sourced by the scripts of bench/ (not run on its own): the tree's root,
# the Release build directory, the Python to use, the environment every
# measured process starts from, the incremental build they begin with, and
# the start that the PyTorch benchmarks share.

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

# bench_torch_begin NAME [--fake]: the start of bridge_bench.sh and
# oom_bench.sh. Sets OUT (default ./bench-out, exported), FAKE (1 with
# --fake: no build, GPU or torch), T0 and WORK ($BUILD/NAME, emptied), and
# unless FAKE builds Release with the PyTorch bridge (incremental).
bench_torch_begin() {
    BENCH_NAME=$1
    OUT=${OUT:-$ROOT/bench-out}
    export OUT
    FAKE=0
    [ "${2:-}" = "--fake" ] && FAKE=1
    T0=$(date +%s)
    WORK=$BUILD/${BENCH_NAME//_/-}
    rm -rf "$WORK"
    mkdir -p "$WORK" "$OUT"
    [ "$FAKE" = 1 ] && return
    say "build with the bridge (incremental)"
    GM_CMAKE_ARGS="-DGMEMPROF_TORCH=ON -DGMEMPROF_PYTHON=$(command -v "$PY" || echo "$PY")" \
        bench_build "$WORK/build.log" "$BENCH_NAME.sh"
    [ -e "$BUILD/lib/libgmemprof_torch.so" ] || { echo "$BENCH_NAME.sh: no libgmemprof_torch.so" >&2; exit 1; }
}

# say TEXT: a progress line of the benchmark that bench_torch_begin started.
say() { echo "[$BENCH_NAME +$(($(date +%s) - T0))s] $*"; }
