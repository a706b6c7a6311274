#!/usr/bin/env bash
# Fuzz smoke run (called by .ci/run): builds the libFuzzer targets with clang
# (ASan + UBSan + libFuzzer) in a separate build directory and runs each one
# for a fixed time from the seed corpus. Any crash, sanitizer report, leak,
# slow input (timeout) or out-of-memory fails the script; the input that did
# it is left in $FUZZ_ART/<target>/.
#
#   scripts/fuzz-smoke.sh                 every target, FUZZ_SECONDS each
#   FUZZ_SECONDS=600 scripts/fuzz-smoke.sh fuzz_reader
#
# Environment: FUZZ_SECONDS (default 30), FUZZ_BUILD (default build-fuzz),
# FUZZ_ART (default $FUZZ_BUILD/fuzz-artifacts), FUZZ_TIMEOUT (seconds one
# input may take, default 20), FUZZ_RSS_MB (default 2048), FUZZ_KNOWN_FINDINGS
# (ids of findings already reported, see docs/reliability.md; unset in CI).
# Without clang or its libFuzzer runtime the script says so and exits 0:
# scripts/setup-deps.sh installs clang where it can.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-30}
build=${FUZZ_BUILD:-build-fuzz}
art=${FUZZ_ART:-$build/fuzz-artifacts}
per_input=${FUZZ_TIMEOUT:-20}
rss=${FUZZ_RSS_MB:-2048}
say() { echo "fuzz-smoke: $*" >&2; }

cc=${FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    say "$cc not found: fuzzing skipped (scripts/setup-deps.sh installs clang)"
    exit 0
fi
# The libFuzzer runtime ships with clang on most systems but not all:
# try to link a one-line target before configuring anything.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
    >"$probe/p.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
    say "$cc cannot link -fsanitize=fuzzer,address,undefined (no libFuzzer runtime): fuzzing skipped"
    exit 0
fi

say "configuring $build with $cc"
mkdir -p "$build"
CC=$cc cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGMEMPROF_FUZZ=ON -DGMEMPROF_SAMPLES=OFF \
    >"$build/fuzz-configure.log" 2>&1 || { cat "$build/fuzz-configure.log" >&2; exit 1; }
targets=("$@")
if ((${#targets[@]} == 0)); then
    targets=(fuzz_reader fuzz_config)
    # fuzz_analyze exists once analyzer/ builds its library (tests/fuzz/CMakeLists.txt).
    if grep -q fuzz.fuzz.analyze_corpus "$build/tests/fuzz/CTestTestfile.cmake" 2>/dev/null; then
        targets+=(fuzz_analyze)
    fi
fi
say "building ${targets[*]}"
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}" >"$build/fuzz-build.log" 2>&1 ||
    { tail -50 "$build/fuzz-build.log" >&2; exit 1; }

# Largest input per target: a trace or a stream of a few records (the
# analyzer's own run is bounded: docs/reliability.md), and an environment of
# a few dozen variables (long values reach the 4 KiB limits).
max_len() {
    case $1 in
    fuzz_reader) echo 65536 ;;
    fuzz_analyze) echo 4096 ;; # the target also cuts its input there (fuzz_analyze.c)
    *) echo 8192 ;;
    esac
}
corpus_of() {
    case $1 in
    fuzz_reader) echo reader ;;
    fuzz_config) echo config ;;
    fuzz_analyze) echo analyze ;;
    *) echo "${1#fuzz_}" ;;
    esac
}

failed=0
for t in "${targets[@]}"; do
    sub=$(corpus_of "$t")
    work="$build/fuzz-corpus/$sub"   # grows during the run; the seeds stay untouched
    mkdir -p "$work" "$art/$t"
    log="$art/$t.log"
    dict=()
    if [ -f "tests/fuzz/$sub.dict" ]; then dict=(-dict="tests/fuzz/$sub.dict"); fi
    say "$t: ${seconds}s from tests/fuzz/corpus/$sub"
    set +e
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        "$build/bin/$t" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout="$per_input" \
        -rss_limit_mb="$rss" -print_final_stats=1 -artifact_prefix="$art/$t/" ${dict[@]+"${dict[@]}"} \
        "$work" "tests/fuzz/corpus/$sub" >"$log" 2>&1
    rc=$?
    set -e
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    if [ "$rc" -ne 0 ] || ls "$art/$t"/crash-* "$art/$t"/leak-* "$art/$t"/timeout-* "$art/$t"/oom-* >/dev/null 2>&1; then
        say "$t FAILED (exit $rc); last lines of $log:"
        grep -vE '^\s+#[0-9]+ 0x' "$log" | tail -25 >&2
        ls "$art/$t" >&2 || true
        failed=1
    else
        say "$t ok: ${execs:-?} executions, $cov"
    fi
done
if ((failed)); then
    say "a fuzz target failed: reproduce with $build/bin/<target> <input> (docs/reliability.md)"
    exit 1
fi
say "all targets clean"
