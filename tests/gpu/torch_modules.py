#!/usr/bin/env python3
"""A training loop that knows nothing of gmemprof, for the module and line
views: run it unmodified under the launcher, then compare the trace with the
facts this script writes.

    python3 tests/gpu/torch_modules.py --model gpt|cnn [--steps N] [--compile] [--ddp]
                                       [--mark-mid-forward] [--facts FILE.json]

Models (default allocator, fp32, SGD, random data):
  gpt  GPT: token and position embeddings, `blocks` (a ModuleList of Block:
       ln1, attn (qkv, proj), ln2, mlp (fc, proj)), ln_f, head
  cnn  ResNetish: stem (conv, bn), layer1/layer2 (BasicBlock: conv1, bn1,
       conv2, bn2, optional downsample), pool, fc
--compile wraps the model in torch.compile; --ddp in DistributedDataParallel
(one process, gloo, one GPU). --mark-mid-forward (GPT): the GPT's forward
emits the NVTX step marker "step" after its first block, so the profiler's
steps, and its windows, begin and end inside a forward. Prints one line per step ("step N loss X")
and nothing else: the launcher must leave stdout as it is.

The facts (--facts, JSON), each as gmemprof should name it:
  root            the path of the outermost module ("GPT", "ResNetish")
  params          {path: bytes}: sum(p.numel() * p.element_size()) of each
                  module's own and descendants' parameters, made by .cuda()
                  before the loop (so they sit in no module range)
  own             {path: bytes}: sum(t.numel() * t.element_size()) of the
                  module's own parameters and buffers (recurse=False): what
                  gmem-analyze --by module puts in its self_params_bytes
  linear_out      {path: bytes}: each nn.Linear's forward output in one step
                  (numel * element size, before the allocator rounds)
  largest_line    "FILE:LINE FUNCTION" of the line of this file that makes
                  the largest activation of the forward pass (the GPT's
                  logits, the CNN's stem output), as the trace's frames say it
  largest_bytes   that activation's bytes as requested from the allocator
                  (numel * element size; the first such request is it)
  paths           every module path a forward pass opens
"""
import argparse
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, D, HEADS, LAYERS, SEQ, BATCH = 4096, 256, 4, 4, 128, 8
MARK_MID_FORWARD = False  # --mark-mid-forward, set once the facts are taken


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-1, -2)) * (D // HEADS) ** -0.5
        att = att.masked_fill(torch.ones(t, t, device=x.device, dtype=torch.bool).triu(1), float("-inf"))
        y = att.softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, D))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, 4 * D)
        self.proj = nn.Linear(4 * D, D)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attn = Attention()
        self.ln2 = nn.LayerNorm(D)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(SEQ, D)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for i, b in enumerate(self.blocks):
            x = b(x)
            if MARK_MID_FORWARD and i == 0:
                torch.cuda.nvtx.mark("step")
        logits = self.head(self.ln_f(x))  # LARGEST: the logits, BATCH*SEQ*VOCAB floats
        return logits


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.downsample(x) if self.downsample is not None else x))


class ResNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64))
        self.layer1 = BasicBlock(64, 64, 1)
        self.layer2 = BasicBlock(64, 128, 2)
        self.fc = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.stem(x))  # LARGEST: the stem's output, 32x64x64x64 floats
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def marker_frame(model_cls):
    """The frame gmemprof names for the line marked LARGEST in forward."""
    here = os.path.abspath(__file__)
    with open(here) as f:
        for n, line in enumerate(f, 1):
            if "# LARGEST" in line and "def " not in line and line.strip().startswith(("x =", "logits =")):
                if (model_cls is GPT) == line.strip().startswith("logits"):
                    return "%s:%d %s.forward" % (here, n, model_cls.__name__)
    return None


def facts_of(model, root, inp):
    params, own, linear_out, paths = {}, {}, {}, []
    for name, m in model.named_modules():
        path = root + ("." + name if name else "")
        params[path] = sum(p.numel() * p.element_size() for p in m.parameters())
        own[path] = sum(t.numel() * t.element_size()
                        for t in list(m.parameters(recurse=False)) + list(m.buffers(recurse=False)))
        paths.append(path)
    outs = {}
    hooks = [m.register_forward_hook(lambda mod, a, o, n=name: outs.__setitem__(n, o.numel() * o.element_size()))
             for name, m in model.named_modules() if isinstance(m, nn.Linear)]
    with torch.no_grad():
        model(inp)
    for h in hooks:
        h.remove()
    for name, b in outs.items():
        linear_out[root + "." + name] = b
    return {"root": root, "params": params, "own": own, "linear_out": linear_out, "paths": paths}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=("gpt", "cnn"), default="gpt")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--ddp", action="store_true")
    ap.add_argument("--mark-mid-forward", action="store_true")
    ap.add_argument("--facts", default=None)
    ap.add_argument("--dynamo-stats", default=None, help="with --compile: write dynamo's graph and break counts here")
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = (GPT() if a.model == "gpt" else ResNetish()).cuda()
    root = type(model).__name__
    if a.model == "gpt":
        make = lambda: (torch.randint(0, VOCAB, (BATCH, SEQ), device=dev), torch.randint(0, VOCAB, (BATCH, SEQ), device=dev))
    else:
        make = lambda: (torch.randn(32, 3, 64, 64, device=dev), torch.randint(0, 10, (32,), device=dev))
    if a.facts:
        f = facts_of(model, root, make()[0])
        f["largest_line"] = marker_frame(type(model))
        f["largest_bytes"] = BATCH * SEQ * VOCAB * 4 if a.model == "gpt" else 32 * 64 * 64 * 64 * 4
        with open(a.facts, "w") as out:
            json.dump(f, out, indent=1, sort_keys=True)
    global MARK_MID_FORWARD
    MARK_MID_FORWARD = a.mark_mid_forward
    torch.manual_seed(1)  # the loop's data, with or without --facts
    run = model
    if a.ddp:
        import torch.distributed as dist
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        dist.init_process_group("gloo", rank=0, world_size=1)
        run = nn.parallel.DistributedDataParallel(model)
    if a.compile:
        run = torch.compile(run)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for step in range(a.steps):
        x, y = make()
        out = run(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("step %d loss %.3f" % (step, loss.item()))
    if a.ddp:
        torch.distributed.destroy_process_group()
    if a.compile and a.dynamo_stats:
        from torch._dynamo.utils import counters
        with open(a.dynamo_stats, "w") as out:
            json.dump({"graph_breaks": sum(counters["graph_break"].values()),
                       "unique_graphs": counters["stats"]["unique_graphs"],
                       "reasons": sorted(counters["graph_break"])}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
