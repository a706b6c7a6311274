"""The cost of one PyTorch op as the program sees it, in ns: a loop of
torch.add on two 4-element tensors, best of ROUNDS medians, after a CUDA
context exists (the PyTorch bridge attaches at the first context). On CPU
tensors (the default) the op does no GPU work: under gmemprof it begins no
op range, so this prices RecordFunction and an op that waits. With --cuda
the op allocates its output, launches a kernel and frees the output when
it is dropped: its op range begins, with the three block events. Run it
bare and under gmemprof with and without op ranges (bench/bridge_bench.sh).

    python3 torch_op_cost.py MODE [--cuda] [--emit-nvtx]
"""
import os
import sys
import time

import torch

N = int(os.environ.get("N", "200000"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))
mode = sys.argv[1] if len(sys.argv) > 1 else "bare"
torch.cuda.init()
torch.zeros(1, device="cuda")
dev = "cuda" if "--cuda" in sys.argv else "cpu"
a, b = torch.ones(4, device=dev), torch.ones(4, device=dev)
ctx = torch.autograd.profiler.emit_nvtx() if "--emit-nvtx" in sys.argv else None
if ctx is not None:
    ctx.__enter__()
meds = []
for r in range(ROUNDS):
    t0 = time.perf_counter_ns()
    for _ in range(N):
        torch.add(a, b)
    if dev == "cuda":
        torch.cuda.synchronize()
    meds.append((time.perf_counter_ns() - t0) / N)
if ctx is not None:
    ctx.__exit__(None, None, None)
print("torch_op_cost %s %s ns_per_op %.1f (rounds %s)" % (mode, dev, min(meds), " ".join("%.0f" % m for m in meds)),
      file=sys.stderr)
