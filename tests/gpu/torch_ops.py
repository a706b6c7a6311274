"""A training loop that knows nothing of gmemprof, for the op-range and
optimizer-step tests (tests/gpu/gpu_test.sh torch_ops_*).

No NVTX line, no emit_nvtx, no tag: gmemprof must find the steps (the end
of each optimizer step after a backward pass) and the ops (PyTorch's
RecordFunction) by itself. Its stdout is one line per optimizer step with
exact integers, the same with and without the profiler.

    python3 torch_ops.py [--model gpt|cnn] [--steps 6] [--accum 1] [--two-opt]

--accum N: N forward/backward passes per optimizer step (gradient
accumulation); --two-opt: the parameters split between SGD and AdamW,
stepped one after the other. Either way, one training step per iteration.
"""
import argparse
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        return F.relu(x + self.b2(self.c2(F.relu(self.b1(self.c1(x))))))


def cnn():
    """ResNet-like: a stem, four residual blocks, pooling, a classifier."""
    return nn.Sequential(nn.Conv2d(3, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                         Block(64), Block(64), nn.MaxPool2d(2), Block(64), Block(64),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))


class GPT(nn.Module):
    def __init__(self, vocab=2048, d=256, heads=4, layers=4, seq=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, seq, d))
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.body = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)
        self.mask = nn.Transformer.generate_square_subsequent_mask(seq)

    def forward(self, x):
        h = self.emb(x) + self.pos[:, : x.shape[1]]
        return self.head(self.body(h, mask=self.mask.to(x.device), is_causal=True))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("gpt", "cnn"), default="gpt")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--accum", type=int, default=1)
    ap.add_argument("--two-opt", action="store_true")
    args = ap.parse_args()
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    model = (cnn() if args.model == "cnn" else GPT()).to(dev)
    params = list(model.parameters())
    if args.two_opt:
        half = len(params) // 2
        opts = [torch.optim.SGD(params[:half], lr=1e-3), torch.optim.AdamW(params[half:], lr=1e-4)]
    else:
        opts = [torch.optim.AdamW(params, lr=1e-4)]
    g = torch.Generator(device=dev)
    g.manual_seed(1)
    for step in range(args.steps):
        for _ in range(args.accum):
            if args.model == "cnn":
                x = torch.randn(32, 3, 32, 32, device=dev, generator=g)
                y = torch.randint(0, 10, (32,), device=dev, generator=g)
                loss = F.cross_entropy(model(x), y)
            else:
                x = torch.randint(0, 2048, (8, 256), device=dev, generator=g)
                loss = F.cross_entropy(model(x).flatten(0, 1), x.flatten())
            (loss / args.accum).backward()
        for o in opts:
            o.step()
        for o in opts:
            o.zero_grad(set_to_none=True)
        print("step %d" % step)
        sys.stdout.flush()
    torch.cuda.synchronize()
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
