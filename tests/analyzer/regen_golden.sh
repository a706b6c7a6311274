#!/bin/sh
# Regenerates tests/analyzer/golden/*.out from the current gmem-analyze.
# Usage: tests/analyzer/regen_golden.sh [BUILD_DIR]   (default: build)
# Review the diff before committing: the key numbers are also asserted by
# test_numbers, independently of these files.
set -eu
build=${1:-build}
GMA_REGEN_GOLDEN=1 ctest --test-dir "$build" -R '^analyzer\.golden\.' --output-on-failure
