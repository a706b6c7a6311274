"""Deterministic PyTorch loop for the GPU tests (tests/gpu/gpu_test.sh).

Its stdout must be byte-identical with and without the profiler, so every
number it prints is exact: matrices of small integers (-3..3) stored as
float32, whose products and sums stay far below 2**24, are computed exactly
in any summation order (TF32 holds such integers exactly too), and the
checksums are taken in int64.

Each iteration ends with torch.cuda.nvtx.mark("step") (the profiler's default
step marker) and takes a tag snapshot with torch.cuda.nvtx.mark("tag:in_step").
CUDA is initialised before the first NVTX call, so with only
CUDA_INJECTION64_PATH set the marks still reach the profiler.

    python3 torch_steps.py [--steps 8] [--size 256] [--exit-code 0]
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--exit-code", type=int, default=0)
    ap.add_argument("--device", default="cuda", help="cpu: a dry run of the logic")
    args = ap.parse_args()

    import torch

    dev = torch.device(args.device)
    if dev.type == "cuda":
        torch.cuda.init()
        mark = torch.cuda.nvtx.mark
        sync = torch.cuda.synchronize
    else:
        mark = sync = lambda *a: None
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    n = args.size

    def ints(rows, cols):
        return torch.randint(-3, 4, (rows, cols), device=dev, generator=gen).to(torch.float32)

    weight = ints(n, n)  # lives through the run: part of every window's baseline
    sync()
    mark("tag:after_setup")
    keep = []
    for i in range(args.steps):
        x = ints(n, n)
        y = x @ weight
        z = torch.relu(y) - torch.relu(-y)  # == y, a few more kernels and temporaries
        keep.append(z[: 1 + i].clone())  # grows by one row per step: a visible "leak"
        total = int(z.to(torch.int64).sum().item())
        absum = int(z.abs().to(torch.int64).sum().item())
        print(f"step {i} sum {total} abs {absum} kept {sum(t.shape[0] for t in keep)}")
        mark("tag:in_step")
        mark("step")
    sync()
    print(f"done {args.steps} steps")
    sys.stdout.flush()
    return args.exit_code


if __name__ == "__main__":
    sys.exit(main())
