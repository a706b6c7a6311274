#!/usr/bin/env bash
# Regenerates the timeline screenshots in docs/img/ from the sample traces
# and from the PyTorch-bridge trace that the test program gma_mktrace_bridge
# writes (tests/analyzer/tl_bridge.c): gmem-analyze --timeline writes each
# page, headless Chromium renders it.
#   scripts/timeline-screenshots.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
analyze=$build/bin/gmem-analyze
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -x "$analyze" ] && [ -x "$build/bin/gma_mktrace_bridge" ] ||
    { echo "timeline-screenshots: build first ($analyze or $build/bin/gma_mktrace_bridge not found)" >&2; exit 1; }
[ -n "$chrome" ] || { echo "timeline-screenshots: chromium not found (scripts/setup-deps.sh installs it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p docs/img
img=$PWD/docs/img
case $analyze in /*) ;; *) analyze=$PWD/$analyze ;; esac
shot() { # NAME HEIGHT ARGS...: the page of gmem-analyze ARGS, 1300 x HEIGHT
    local name=$1 height=$2; shift 2
    "$analyze" "$@" --timeline "$work/$name.html" >/dev/null
    "$chrome" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$work/profile" \
        --window-size=1300,"$height" --virtual-time-budget=10000 \
        --screenshot="$img/$name.png" "file://$work/$name.html" >/dev/null 2>&1
    echo "docs/img/$name.png"
}
shot timeline-naive 560 samples/traces/naive.zst
shot timeline-sdpa 560 samples/traces/sdpa.zst
shot timeline-naive-range 560 samples/traces/naive.zst --by range
shot timeline-diff 860 samples/traces/naive.zst --diff samples/traces/sdpa.zst
shot timeline-ranks 1560 samples/traces/ranks/rank*.zst
# the page's title is the trace's path: the same in every run
"$build/bin/gma_mktrace_bridge" "$work/tl_bridge.gmt"
cd "$work"
shot timeline-bridge 540 tl_bridge.gmt
