"""Two-rank PyTorch job for the multi-rank GPU test (tests/gpu/gpu_test.sh torch_ranks).

Run by torchrun (python -m torch.distributed.run --nproc_per_node=N); every
rank uses GPU (LOCAL_RANK mod the number of GPUs), so on a one-GPU machine
the ranks share it. Backend: Gloo by default (works with ranks sharing a
GPU), --backend nccl on a machine with one GPU per rank.

Known by construction, per rank r:
  - one tensor of (r+1) * 32 MiB, allocated before the first step and never
    freed: the caching allocator gives a request of 10 MiB or more a segment
    of its size rounded up to 2 MiB, so this is a cudaMalloc of exactly that
    size and rank r's trace peak exceeds rank 0's by exactly r * 32 MiB
    (everything else the ranks do is identical). Smaller requests share
    20 MiB segments: with 8 and 16 MiB tensors, measured on an H200, rank 0
    (8 MiB in a 20 MiB segment) peaked 4 MiB ABOVE rank 1 (16 MiB segment);
  - each step: a matmul on small integers, all_reduce(SUM) of the result,
    torch.cuda.nvtx.mark("step").
Rank 0 prints checksums (exact: small integers in float32); the other ranks
print nothing, so stdout is the same with and without the profiler.

    torchrun --nproc_per_node=2 torch_ranks.py [--steps 6] [--backend gloo|nccl]
"""
import argparse
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--backend", default="gloo", choices=("gloo", "nccl"))
    args = ap.parse_args()

    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    dev = torch.device("cuda", local % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    torch.cuda.init()
    dist.init_process_group(args.backend, rank=rank, world_size=world,
                            device_id=dev if args.backend == "nccl" else None)

    extra = torch.empty((rank + 1) * 32 * 2**20, dtype=torch.uint8, device=dev)
    extra.fill_(1)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    n = args.size
    a = torch.randint(-3, 4, (n, n), generator=gen, device=dev).float()
    b = torch.randint(-3, 4, (n, n), generator=gen, device=dev).float()
    for step in range(args.steps):
        c = a @ b + float(step)
        dist.all_reduce(c, op=dist.ReduceOp.SUM)
        s = int(c.to(torch.int64).sum().item())
        torch.cuda.synchronize()
        torch.cuda.nvtx.mark("step")
        if rank == 0:
            print("step %d world %d checksum %d" % (step, world, s))
    dist.barrier()
    # The extra tensor is live to the end (it is used here).
    ok = int(extra.sum().item()) == extra.numel()
    if rank == 0:
        print("done" if ok else "extra tensor corrupted")
    dist.destroy_process_group()
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
