"""A training loop whose batch doubles every step until CUDA runs out of
memory (tests/gpu/gpu_test.sh torch_oom), with no gmemprof code: steps are
NVTX marks "step", ops NVTX ranges (emit_nvtx). It catches
torch.OutOfMemoryError, writes PyTorch's own message to --error, and ends
normally: stdout holds only --say.

The batch is a multiple of 128 rows of 4096 float32, so every tensor is a
multiple of 2 MiB: the size PyTorch prints ("Tried to allocate") is then
the request the allocator reports to the bridge, with no rounding between.
"""
import argparse
import contextlib
import json

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--error", required=True, help="JSON file: PyTorch's message, the step, the batch")
    p.add_argument("--say", default="torch_oom done")
    p.add_argument("--no-nvtx", action="store_true", help="no emit_nvtx op ranges")
    a = p.parse_args()
    torch.manual_seed(0)
    width = 4096
    model = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, width)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    batch, step, out = 1024, 0, {}
    ctx = contextlib.nullcontext() if a.no_nvtx else torch.autograd.profiler.emit_nvtx()
    with ctx:
        while step < 64:
            try:
                x = torch.randn(batch, width, device="cuda")
                loss = model(x).square().mean()
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                torch.cuda.synchronize()
            except torch.OutOfMemoryError as e:
                out = {"message": str(e), "step": step, "batch": batch}
                break
            step += 1
            batch *= 2
            torch.cuda.nvtx.mark("step")
    with open(a.error, "w") as f:
        json.dump(out, f)
    print(a.say)


if __name__ == "__main__":
    main()
