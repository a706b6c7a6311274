#!/usr/bin/env bash
# Records the --fit samples (samples/traces/fit/) on a GPU machine:
#
#     bash samples/record_fit.sh OUTDIR [BUILD]      (BUILD: a tree with the PyTorch bridge,
#                                                      default build-gpu from tests/gpu/run_all.sh)
#
# samples/train_gpt.py with naive attention under the default caching allocator, at sequence
# lengths 256, 512 and 1024 (the runs --fit reads) and 2048 (the size it predicts, recorded to
# hold the prediction against): one recorded step each (a schedule after two steps of warm-up,
# optimizer state made), and PyTorch's own max_memory_allocated() of the run beside each trace.
set -euo pipefail
OUT=${1:?usage: samples/record_fit.sh OUTDIR [BUILD]}
B=${2:-build-gpu}
PY=${GM_PYTHON:-python3}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
for s in 256 512 1024 2048; do
    "$B/bin/gmemprof" -q -o "$OUT/seq$s.zst" --schedule wait=2,warmup=0,active=1 -- \
        "$PY" samples/train_gpt.py --d-model 256 --heads 4 --layers 4 --seq "$s" --batch 8 --vocab 2048 \
        --attn naive --steps 4 --no-nvtx --alloc-report "$OUT/seq$s.alloc.json" >/dev/null
done
"$B/bin/gmem-analyze" "$OUT/seq256.zst" "$OUT/seq512.zst" "$OUT/seq1024.zst" --fit 256,512,1024 --at 2048 \
    >"$OUT/fit.txt"
"$B/bin/gmem-analyze" "$OUT/seq2048.zst" --top 3 >"$OUT/seq2048.txt"
