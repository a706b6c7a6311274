"""A PyTorch training loop with no gmemprof code, for the bridge's GPU tests
(tests/gpu/gpu_test.sh torch_bridge*): the default caching allocator (or
what PYTORCH_CUDA_ALLOC_CONF says), tags through NVTX marks, one of them
before the first CUDA call, and PyTorch's own counters at each tag written
to --counters FILE.json (stdout: "done" alone, so that it can be compared
with an unprofiled run).

    python3 torch_bridge.py --counters C.json [--steps 8] [--graph]

Steps vary the batch size, so the allocator grows, splits and reuses its
segments; empty_cache() in the middle frees its cached segments. At each
"step" mark the allocated bytes are kept too (a schedule's window baseline
is the blocks live at its first step's mark). --graph adds a CUDA graph:
capture (its private pool allocates), replays, and the graph's release.

counters: {"device": 0, "tags": [[name, allocated, reserved], ...],
           "step_marks": [allocated at mark 1, 2, ...], "peak_allocated",
           "peak_reserved", "graph": {...} with --graph}
"""
import argparse
import json

import torch
import torch.nn as nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--counters", required=True)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--graph", action="store_true")
    args = ap.parse_args()
    tags, marks = [], []

    def tag(name):
        torch.cuda.nvtx.mark("tag:" + name)
        # before CUDA is initialised these read 0 without initialising it
        tags.append([name, torch.cuda.memory_allocated(), torch.cuda.memory_reserved()])

    tag("before_model")  # the program's first CUDA-related call
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tag("after_model")
    for i in range(args.steps):
        torch.cuda.nvtx.mark("step")
        marks.append(torch.cuda.memory_allocated())
        x = torch.randn(256 + 96 * (i % 5), 1024, device="cuda")
        small = [torch.randn(64 + j, device="cuda") for j in range(32)]  # the small pool (< 1 MiB)
        loss = model(x).square().mean() + sum(s.sum() for s in small)
        tag("forward_%d" % i)
        loss.backward()
        tag("backward_%d" % i)
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, small, loss
        if i == args.steps // 2:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            tag("empty_cache")
    torch.cuda.synchronize()
    tag("trained")
    out = {"device": 0}
    if args.graph:
        out["graph"] = graph_part(model, tag)
    tag("end")
    out.update({"tags": tags, "step_marks": marks, "peak_allocated": torch.cuda.max_memory_allocated(),
                "peak_reserved": torch.cuda.max_memory_reserved()})
    with open(args.counters, "w") as f:
        json.dump(out, f, indent=1)
    print("done")


def graph_part(model, tag):
    """Capture a forward pass into a CUDA graph and replay it: what the
    tracker reports is read from the trace between these tags (the replays'
    inputs are made before the capture, so the replay phase allocates
    nothing of its own)."""
    with torch.no_grad():
        static_x = torch.randn(512, 1024, device="cuda")
        inputs = [torch.randn(512, 1024, device="cuda") for _ in range(5)]
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                model(static_x)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        tag("before_capture")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_y = model(static_x).relu()
        torch.cuda.synchronize()
        tag("after_capture")
        for x in inputs:
            static_x.copy_(x)
            g.replay()
        torch.cuda.synchronize()
        tag("after_replay")
        del static_y
        g.reset()
        del g
        torch.cuda.synchronize()
        tag("after_graph_reset")
        torch.cuda.empty_cache()
        tag("after_graph_empty_cache")
    return {"replays": len(inputs)}


if __name__ == "__main__":
    main()
