"""Workloads for --fit and the out-of-memory explanation on a GPU (tests/gpu/gpu_test.sh
torch_fit, torch_fit_batch, torch_frag). No gmemprof code: an unmodified loop.

  gpt --seq S --batch B   a small GPT-like model with naive attention (the scores are a
                          B x H x S x S tensor: quadratic in S), AdamW, 3 steps; prints
                          PyTorch's max_memory_allocated() of the run as JSON (--out)
  frag                    a fragmentation failure on purpose: a large tensor freed into the
                          cache, a smaller one made in its segment, then a request larger than
                          the device's free bytes but smaller than free + cached; catches
                          torch.OutOfMemoryError and writes {"oom": true|false} to --out
"""
import argparse
import json

import torch


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (d // self.heads) ** 0.5)
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


def gpt(a):
    torch.manual_seed(0)
    d, heads, layers, vocab = 256, 4, 4, 1024
    emb = torch.nn.Embedding(vocab, d)
    blocks = torch.nn.Sequential(*[Block(d, heads) for _ in range(layers)])
    head = torch.nn.Linear(d, vocab)
    model = torch.nn.Sequential(emb, blocks, torch.nn.LayerNorm(d), head).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(3):
        idx = torch.randint(0, vocab, (a.batch, a.seq), device="cuda")
        logits = model(idx)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, vocab), idx.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
    return {"max_allocated": torch.cuda.max_memory_allocated(), "max_reserved": torch.cuda.max_memory_reserved()}


def frag(a):
    free, total = torch.cuda.mem_get_info()
    unit = 2 << 20  # whole 2 MiB pages: the allocator's sizes are then the ones asked
    big = (int(free * 0.5) // unit) * unit
    small = (int(free * 0.125) // unit) * unit
    x = torch.empty(big, dtype=torch.uint8, device="cuda")
    del x  # cached: one segment of `big` bytes
    y = torch.empty(small, dtype=torch.uint8, device="cuda")  # split from that segment
    ask = (int(free * 0.6) // unit) * unit  # > free now, < free + the segment's unused rest
    out = {"oom": False, "ask": ask, "big": big, "small": small, "total": total}
    try:
        z = torch.empty(ask, dtype=torch.uint8, device="cuda")
        del z
    except torch.OutOfMemoryError as e:
        out.update(oom=True, message=str(e))
    del y
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["gpt", "frag"])
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    res = gpt(a) if a.what == "gpt" else frag(a)
    with open(a.out, "w") as f:
        json.dump(res, f)
    print("torch_fit done")


if __name__ == "__main__":
    main()
