"""A PyTorch training loop with no gmemprof code: the default caching
allocator, tags through NVTX marks, and PyTorch's own counters printed to
stderr as `counter name value` lines for the checks to compare against."""
import os
import sys

import torch
import torch.nn as nn


def say(*a):
    print(*a, file=sys.stderr, flush=True)


def main():
    steps = int(os.environ.get("STEPS", "6"))
    torch.cuda.nvtx.mark("tag:before_model")
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    torch.cuda.synchronize()
    torch.cuda.nvtx.mark("tag:after_model")
    say("counter after_model allocated", torch.cuda.memory_allocated())
    say("counter after_model reserved", torch.cuda.memory_reserved())
    for i in range(steps):
        torch.cuda.nvtx.mark("step")
        x = torch.randn(512 + 64 * i, 1024, device="cuda")
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
    torch.cuda.nvtx.mark("tag:end")
    say("counter end allocated", torch.cuda.memory_allocated())
    say("counter end reserved", torch.cuda.memory_reserved())
    say("counter peak allocated", torch.cuda.max_memory_allocated())
    say("counter peak reserved", torch.cuda.max_memory_reserved())
    print("done")


if __name__ == "__main__":
    main()
