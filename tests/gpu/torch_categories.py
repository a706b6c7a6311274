"""Training loops for the memory categories on a GPU (tests/gpu/gpu_test.sh torch_categories).
No gmemprof code: unmodified loops that write what PyTorch itself can count to --out (JSON).

  gpt   a GPT-like model (tests/gpu/torch_fit.py's Block) with AdamW, 3 steps,
        zero_grad(set_to_none=True)
  cnn   a small CNN with BatchNorm and SGD with momentum, 3 steps

Each size is given twice: as PyTorch counts a tensor (numel * element_size) and as its
caching allocator counts the block that holds it (the request rounded up to 512 bytes, what
torch.cuda.memory_allocated() adds and what the trace's blocks carry). Every step drops its
batch, output and loss before the next, so nothing but the model, its gradients' last state
and the optimizer's state is alive at the end.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_fit import Block  # noqa: E402  (the same model as the --fit tests)

STEPS = 3


def block_bytes(t):
    n = t.numel() * t.element_size()
    return max(512, (n + 511) // 512 * 512)


def sizes(tensors):
    tensors = [t for t in tensors if t is not None and t.is_cuda]
    return {"bytes": sum(t.numel() * t.element_size() for t in tensors),
            "blocks": sum(block_bytes(t) for t in tensors), "count": len(tensors)}


def facts(model, opt):
    state = [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]
    return {
        "parameter": sizes(list(model.parameters()) + list(model.buffers())),
        "optimizer_state": sizes(state),
        "gradient_per_step": sizes([p.grad for p in model.parameters() if p.requires_grad]),
        "max_allocated": torch.cuda.max_memory_allocated(),
        "steps": STEPS,
    }


def gpt():
    torch.manual_seed(0)
    d, heads, layers, vocab, batch, seq = 256, 4, 4, 1024, 4, 512
    model = torch.nn.Sequential(torch.nn.Embedding(vocab, d), torch.nn.Sequential(*[Block(d, heads) for _ in range(layers)]),
                                torch.nn.LayerNorm(d), torch.nn.Linear(d, vocab)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    grads = None
    for _ in range(STEPS):
        idx = torch.randint(0, vocab, (batch, seq), device="cuda")
        logits = model(idx)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, vocab), idx.view(-1))
        loss.backward()
        grads = sizes([p.grad for p in model.parameters()])
        opt.step()
        opt.zero_grad(set_to_none=True)
        del idx, logits, loss
    torch.cuda.synchronize()
    out = facts(model, opt)
    out["gradient_per_step"] = grads
    return out


def cnn():
    torch.manual_seed(0)
    c = 128  # every bias and BatchNorm vector is 512 bytes: a block of its own size
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, c, 3, padding=1), torch.nn.BatchNorm2d(c), torch.nn.ReLU(),
        torch.nn.Conv2d(c, c, 3, padding=1), torch.nn.BatchNorm2d(c), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(c, 128)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    grads = None
    for _ in range(STEPS):
        x = torch.randn(32, 3, 64, 64).cuda()
        y = torch.randint(0, 128, (32,)).cuda()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        grads = sizes([p.grad for p in model.parameters()])
        opt.step()
        opt.zero_grad(set_to_none=True)
        del x, y, loss
    torch.cuda.synchronize()
    out = facts(model, opt)
    out["gradient_per_step"] = grads
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["gpt", "cnn"])
    p.add_argument("--out", required=True)
    a = p.parse_args()
    res = gpt() if a.what == "gpt" else cnn()
    with open(a.out, "w") as f:
        json.dump(res, f)
    print("torch_categories done")


if __name__ == "__main__":
    main()
