"""The cost of one tensor allocation plus free through PyTorch's caching
allocator, in ns, as the program sees it: a loop of torch.empty + del on
the GPU, best of ROUNDS medians. Run it bare, under gmemprof (the bridge's
tracker on), and with _record_memory_history, and compare (docs/benchmarks.md,
bench/bridge_bench.sh).
NUMEL sets the tensor's float32 elements (default 4096, 16 KiB: a
small-pool block; above 262144 the block comes from the large pool)."""
import os
import sys
import time


def pair_rounds(torch, pairs, rounds, numel):
    """ns per torch.empty(numel) + del on the GPU, one median per round of
    `pairs` pairs (bench/tracker_split.py times its phases with it too)."""
    meds = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(pairs):
            y = torch.empty(numel, device="cuda")
            del y
        meds.append((time.perf_counter_ns() - t0) / pairs)
    return meds


def main():
    import torch

    n = int(os.environ.get("N", "200000"))
    rounds = int(os.environ.get("ROUNDS", "7"))
    numel = int(os.environ.get("NUMEL", "4096"))
    mode = sys.argv[1] if len(sys.argv) > 1 else "bare"
    torch.cuda.init()
    x = torch.empty(1024, device="cuda")  # noqa: F841 (kept live through the loop)
    if mode == "history":
        torch.cuda.memory._record_memory_history(context=None)
    meds = pair_rounds(torch, n, rounds, numel)
    print("torch_alloc_cost %s numel %d ns_per_pair %.1f (rounds %s)"
          % (mode, numel, min(meds), " ".join("%.0f" % m for m in meds)), file=sys.stderr)


if __name__ == "__main__":
    main()
