#!/usr/bin/env bash
# Long fuzz run on many cores with prebuilt libFuzzer binaries (no cmake, no
# clang needed here): every target in turn, each on N parallel workers
# (libFuzzer -jobs=N -workers=N, one shared corpus), for a fixed time or
# until a total number of executions per target. Prints per target the
# executions summed over the workers (libFuzzer's final
# `stat::number_of_executed_units` of each worker), exec/s, coverage and the
# findings; any finding (crash, sanitizer report, leak, timeout, out of
# memory) is copied to OUT/findings/TARGET/ and the script exits 1.
#
#   scripts/fuzz-long.sh --bin build-fuzz/bin --cores 16 --execs 10000000 --out fuzz-long-out
#   scripts/fuzz-long.sh --bin DIR --cores 2 --time 20 fuzz_config
#
# Options:
#   --bin DIR      the fuzz binaries (fuzz_reader, fuzz_config, fuzz_analyze),
#                  built with GMEMPROF_FUZZ=ON and clang (scripts/fuzz-smoke.sh
#                  builds them in build-fuzz/bin). Default: build-fuzz/bin.
#   --cores N      workers per target (default: the number of CPUs).
#   --time S       seconds per target (each worker stops after S seconds).
#   --execs N      total executions per target: each of the N workers runs
#                  ceil(N / workers) inputs. With --time too, whichever comes
#                  first. Neither: --time 3600.
#   --out DIR      results (default: fuzz-long-out): summary.txt, per target
#                  TARGET/logs/ (one log per worker), TARGET/corpus/ (the
#                  grown corpus) and findings/TARGET/ (reproducers).
#   --seeds DIR    seed corpora, DIR/{reader,config,analyze}/ (default:
#                  tests/fuzz/corpus of this checkout); dictionaries from
#                  tests/fuzz/*.dict.
#   TARGET...      a subset (default: every fuzz_* binary of the three in --bin).
#
# Environment: FUZZ_TIMEOUT (seconds one input may take, default 20),
# FUZZ_RSS_MB (per worker, default 2048), FUZZ_KNOWN_FINDINGS (ids of known
# findings to skip, docs/reliability.md; leave unset for a real run),
# ASAN_OPTIONS / UBSAN_OPTIONS (defaults as in scripts/fuzz-smoke.sh).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)

bin=build-fuzz/bin
cores=$(nproc 2>/dev/null || echo 2)
seconds=""
execs=""
out=fuzz-long-out
seeds=$ROOT/tests/fuzz/corpus
per_input=${FUZZ_TIMEOUT:-20}
rss=${FUZZ_RSS_MB:-2048}
targets=()

say() { echo "fuzz-long: $*" >&2; }
die() {
    say "$*"
    exit 2
}
need_arg() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (see the top of $0)"; }
is_count() { case $1 in '' | *[!0-9]*) return 1 ;; *) [ "$1" -gt 0 ] ;; esac }

while [ $# -gt 0 ]; do
    case $1 in
    --bin) need_arg "$@"; bin=$2; shift 2 ;;
    --cores) need_arg "$@"; cores=$2; shift 2 ;;
    --time) need_arg "$@"; seconds=$2; shift 2 ;;
    --execs) need_arg "$@"; execs=$2; shift 2 ;;
    --out) need_arg "$@"; out=$2; shift 2 ;;
    --seeds) need_arg "$@"; seeds=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) targets+=("$1"); shift ;;
    esac
done
is_count "$cores" || die "--cores wants a positive number, got '$cores'"
[ -z "$seconds" ] || is_count "$seconds" || die "--time wants a positive number of seconds, got '$seconds'"
[ -z "$execs" ] || is_count "$execs" || die "--execs wants a positive number, got '$execs'"
[ -n "$seconds" ] || [ -n "$execs" ] || seconds=3600
[ -d "$bin" ] || die "no binary directory $bin (build with: scripts/fuzz-smoke.sh, or see docs/reliability.md)"
bin=$(cd "$bin" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ ${#targets[@]} -eq 0 ]; then
    for t in fuzz_reader fuzz_config fuzz_analyze; do
        if [ -x "$bin/$t" ]; then targets+=("$t"); else say "no $bin/$t: skipped"; fi
    done
    [ ${#targets[@]} -gt 0 ] || die "no fuzz binaries in $bin"
fi

corpus_of() {
    case $1 in
    fuzz_reader) echo reader ;;
    fuzz_config) echo config ;;
    fuzz_analyze) echo analyze ;;
    *) echo "${1#fuzz_}" ;;
    esac
}
# The input sizes of scripts/fuzz-smoke.sh (fuzz_analyze also cuts inputs at
# 4096 bytes itself).
max_len() {
    case $1 in
    fuzz_reader) echo 65536 ;;
    fuzz_analyze) echo 4096 ;;
    *) echo 8192 ;;
    esac
}

# Every binary must start here before hours are spent: a missing shared
# library (e.g. libzstd.so.1) or a build without libFuzzer shows now.
for t in "${targets[@]}"; do
    [ -x "$bin/$t" ] || die "no executable $bin/$t"
    if command -v ldd >/dev/null 2>&1 && ldd "$bin/$t" 2>/dev/null | grep -q 'not found'; then
        ldd "$bin/$t" | grep 'not found' >&2
        die "$bin/$t needs shared libraries this machine lacks (above)"
    fi
    probe=$(mktemp -d)
    if ! "$bin/$t" -runs=0 "$probe" >"$probe.log" 2>&1 || ! grep -q 'INFO: Seed' "$probe.log"; then
        tail -5 "$probe.log" >&2
        rm -rf "$probe" "$probe.log"
        die "$bin/$t does not run as a libFuzzer binary (built without GMEMPROF_FUZZ=ON and clang?)"
    fi
    rm -rf "$probe" "$probe.log"
    [ -d "$seeds/$(corpus_of "$t")" ] || die "no seed corpus $seeds/$(corpus_of "$t")"
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The running libFuzzer (in its own process group, with its workers) is
# stopped on Ctrl-C or TERM.
running=""
stop() {
    if [ -n "$running" ]; then
        say "stopping (process group $running)"
        kill -TERM -- "-$running" 2>/dev/null || true
    fi
    exit 130
}
trap stop INT TERM

summary=$out/summary.txt
{
    echo "# fuzz-long: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc 2>/dev/null || echo '?') CPUs"
    echo "# workers $cores per target; ${seconds:+time ${seconds}s per target; }${execs:+executions $execs per target; }binaries $bin"
    echo "| target | executions | wall time | exec/s | cov / ft | corpus | findings |"
    echo "|---|---|---|---|---|---|---|"
} >"$summary"

findings_total=0
for t in "${targets[@]}"; do
    sub=$(corpus_of "$t")
    tdir=$out/$t
    rm -rf "$tdir/logs" "$tdir/artifacts"
    mkdir -p "$tdir/logs" "$tdir/artifacts" "$tdir/corpus"
    args=(-max_len="$(max_len "$t")" -timeout="$per_input" -rss_limit_mb="$rss" -print_final_stats=1
          -artifact_prefix="$tdir/artifacts/" -jobs="$cores" -workers="$cores")
    [ -f "$ROOT/tests/fuzz/$sub.dict" ] && args+=(-dict="$ROOT/tests/fuzz/$sub.dict")
    [ -n "$seconds" ] && args+=(-max_total_time="$seconds")
    [ -n "$execs" ] && args+=(-runs=$(((execs + cores - 1) / cores)))
    say "$t: $cores workers, ${seconds:+${seconds}s}${seconds:+${execs:+ or }}${execs:+$execs executions}; logs in $tdir/logs"
    start=$(date +%s)
    # Workers write fuzz-N.log into the current directory.
    (cd "$tdir/logs" && exec setsid "$bin/$t" "${args[@]}" "$tdir/corpus" "$seeds/$sub" >"$tdir/logs/main.log" 2>&1) &
    running=$!
    set +e
    wait "$running"
    rc=$?
    set -e
    running=""
    wall=$(($(date +%s) - start))
    [ "$wall" -gt 0 ] || wall=1

    # Executions: each worker's final stat line; a worker that died without
    # one counts its last status line (#N ...).
    total=0
    workers=0
    for log in "$tdir"/logs/fuzz-*.log; do
        [ -f "$log" ] || continue
        workers=$((workers + 1))
        n=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
        [ -n "$n" ] || n=$(sed -n 's/^#\([0-9][0-9]*\)[[:space:]].*/\1/p' "$log" | tail -1)
        total=$((total + ${n:-0}))
    done
    if [ "$workers" -eq 0 ]; then # (a libFuzzer that ran in-process after all)
        n=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$tdir/logs/main.log" | tail -1)
        total=${n:-0}
    fi
    cov=$(cat "$tdir"/logs/*.log | grep -oE 'cov: [0-9]+ ft: [0-9]+' | sort -t' ' -k2,2n -k4,4n | tail -1 || true)
    cov=${cov:-?}
    ncorpus=$(find "$tdir/corpus" -type f | wc -l)

    # Findings: libFuzzer's artifacts, and any worker that reported a
    # sanitizer error or a failed invariant without leaving one.
    found=()
    for f in "$tdir"/artifacts/crash-* "$tdir"/artifacts/leak-* "$tdir"/artifacts/timeout-* "$tdir"/artifacts/oom-*; do
        [ -f "$f" ] && found+=("$f")
    done
    reported=$(grep -lE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|FUZZ INVARIANT FAILED' \
        "$tdir"/logs/*.log 2>/dev/null | wc -l)
    nfind=${#found[@]}
    if [ "$nfind" -gt 0 ]; then
        mkdir -p "$out/findings/$t"
        cp "${found[@]}" "$out/findings/$t/"
        for log in $(grep -lE 'ERROR: |runtime error:|FUZZ INVARIANT FAILED' "$tdir"/logs/*.log 2>/dev/null); do
            cp "$log" "$out/findings/$t/"
        done
    fi
    rate=$((total / wall))
    if [ "$nfind" -gt 0 ]; then
        what="$nfind: $(for f in "${found[@]}"; do printf '%s ' "findings/$t/$(basename "$f")"; done)"
    elif [ "$reported" -gt 0 ]; then
        nfind=1
        what="$reported worker log(s) report an error but left no reproducer: see $tdir/logs"
    else
        what=none
    fi
    findings_total=$((findings_total + nfind))
    printf '| %s | %s | %s s | %s | %s | %s files | %s |\n' "$t" "$total" "$wall" "$rate" "$cov" "$ncorpus" "$what" >>"$summary"
    say "$t: $total executions in $wall s over $workers workers ($rate exec/s), $cov, corpus $ncorpus files, libFuzzer exit $rc, findings: $what"
    if [ -n "$execs" ] && [ "$total" -lt "$execs" ] && [ "$nfind" -eq 0 ]; then
        say "$t: note: fewer than the $execs executions asked for (--time reached first?)"
    fi
done

echo >&2
cat "$summary" >&2
if [ "$findings_total" -gt 0 ]; then
    say "FINDINGS: reproducers in $out/findings/ (replay: BIN/TARGET FILE; docs/reliability.md)"
    exit 1
fi
say "no findings; summary in $summary"
