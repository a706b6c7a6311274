"""The cost of one tensor allocation plus free through PyTorch's caching
allocator, in ns, as the program sees it: a loop of torch.empty + del on
the GPU, best of ROUNDS medians. Run it bare, under gmemprof (the bridge's
tracker on), and with _record_memory_history, and compare (docs/benchmarks.md,
bench/bridge_bench.sh).
NUMEL sets the tensor's float32 elements (default 4096, 16 KiB: a
small-pool block; above 262144 the block comes from the large pool)."""
import os
import statistics
import sys
import time

import torch

N = int(os.environ.get("N", "200000"))
ROUNDS = int(os.environ.get("ROUNDS", "7"))
NUMEL = int(os.environ.get("NUMEL", "4096"))
mode = sys.argv[1] if len(sys.argv) > 1 else "bare"
torch.cuda.init()
x = torch.empty(1024, device="cuda")
if mode == "history":
    torch.cuda.memory._record_memory_history(context=None)
meds = []
for r in range(ROUNDS):
    t0 = time.perf_counter_ns()
    for _ in range(N):
        y = torch.empty(NUMEL, device="cuda")
        del y
    meds.append((time.perf_counter_ns() - t0) / N)
print("torch_alloc_cost %s numel %d ns_per_pair %.1f (rounds %s)"
      % (mode, NUMEL, min(meds), " ".join("%.0f" % m for m in meds)), file=sys.stderr)
