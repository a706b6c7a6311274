#!/usr/bin/env python3
"""GPT-style training loop with a known memory story, for gmemprof's samples,
GPU tests and benchmarks (random data, no downloads).

    python3 samples/train_gpt.py [--d-model 256] [--heads 4] [--layers 4] [--seq 512]
        [--batch 8] [--vocab 2048] [--steps 6] [--attn naive|sdpa] [--emit-nvtx] [--no-nvtx]
        [--alloc-report FILE.json] [--torch-profile FILE.json] [--seed 0]

Attention: "naive" is matmul, causal mask, softmax, matmul and materialises
the batch x heads x T x T score matrix (and keeps its softmax, in fp32 under
autocast, for the backward pass); "sdpa" is F.scaled_dot_product_attention,
which never does. Training: bf16 autocast, AdamW, cross-entropy on random
tokens.

Markers for the profiler (torch.cuda.nvtx, no extra dependency):
  "step" at the end of every step (gmemprof's default step marker);
  "tag:before_model", "tag:after_model", "tag:after_optimizer",
  "tag:after_first_forward", "tag:after_training" (tag snapshots, the seed's
  MemoryMonitor). CUDA is initialised before the first mark, so the marks reach
  a profiler loaded with only CUDA_INJECTION64_PATH.
--emit-nvtx runs the loop under torch.autograd.profiler.emit_nvtx(): every op
is an NVTX range ("aten::mm, seq = 12, ..."), so gmemprof can rank ops.

--alloc-report FILE writes PyTorch's own view: max_memory_allocated/reserved,
memory_stats, memory_summary, the allocator backend and, at every tag, the
allocated/reserved counters (the seed's MemoryMonitor table).
--torch-profile FILE runs the same loop under torch.profiler(profile_memory=True)
with schedule(wait, warmup, active) = --tp-schedule and writes, per op name,
key_averages()'s self/total device memory, and the table sorted by it.

Stdout is deterministic: a header line, "step N" per step, "done". Loss
values (not bit-reproducible on a GPU) are printed only with --print-loss.
"""
import argparse
import contextlib
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

TAGS = ("before_model", "after_model", "after_optimizer", "after_first_forward", "after_training")


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, heads, seq, attn):
        super().__init__()
        if d_model % heads:
            raise ValueError("d_model must be a multiple of heads")
        self.heads = heads
        self.attn = attn
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        if attn == "naive":
            mask = torch.tril(torch.ones(seq, seq, dtype=torch.bool))
            self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        hd = c // self.heads
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k = k.view(b, t, self.heads, hd).transpose(1, 2)
        v = v.view(b, t, self.heads, hd).transpose(1, 2)
        if self.attn == "sdpa":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))  # b x h x t x t
            att = att.masked_fill(~self.mask[:t, :t], float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d_model, heads, seq, attn):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, heads, seq, attn)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.fc_out = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc_out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, d_model, heads, layers, seq, attn):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(seq, d_model)
        self.blocks = nn.ModuleList(Block(d_model, heads, seq, attn) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def make_batches(vocab, batch, seq, device, seed, count=4):
    """`count` fixed random token batches (inputs, targets), made on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed + 1)
    out = []
    for _ in range(count):
        t = torch.randint(0, vocab, (batch, seq + 1), device=device, generator=gen)
        out.append((t[:, :-1].contiguous(), t[:, 1:].contiguous()))
    return out


def forward_loss(model, x, y, device_type, amp=True):
    with torch.autocast(device_type=device_type, dtype=torch.bfloat16, enabled=amp):
        logits = model(x)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), y.view(-1))


def train_step(model, opt, x, y, device_type, amp=True, after_forward=None):
    loss = forward_loss(model, x, y, device_type, amp)
    if after_forward:
        after_forward()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def build(args, device):
    """Model, optimizer and data, seeded: the same run every time."""
    torch.manual_seed(args.seed)
    model = GPT(args.vocab, args.d_model, args.heads, args.layers, args.seq, args.attn).to(device)
    return model


def nvtx_mark(device):
    if device.type == "cuda":
        return torch.cuda.nvtx.mark
    return lambda _name: None


def memory_counters(device):
    if device.type != "cuda":
        return {"allocated": 0, "reserved": 0}
    return {
        "allocated": torch.cuda.memory_allocated(device),
        "reserved": torch.cuda.memory_reserved(device),
    }


def mem_attr(evt, kind):
    """key_averages() field across PyTorch versions: *_device_memory_usage
    (2.x) or *_cuda_memory_usage (older)."""
    for name in (kind.replace("X", "device"), kind.replace("X", "cuda")):
        if hasattr(type(evt), name) or hasattr(evt, name):
            try:
                return int(getattr(evt, name)), name
            except (AttributeError, TypeError):
                continue
    return 0, None


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--attn", choices=("naive", "sdpa"), default="sdpa")
    ap.add_argument("--emit-nvtx", action="store_true", help="run under emit_nvtx(): every op an NVTX range")
    ap.add_argument("--no-nvtx", action="store_true",
                    help="no NVTX mark at all (no step marker, no tag): a script that knows nothing of gmemprof")
    ap.add_argument("--alloc-report", metavar="FILE.json")
    ap.add_argument("--torch-profile", metavar="FILE.json",
                    help="run under torch.profiler(profile_memory=True) and dump key_averages")
    ap.add_argument("--tp-schedule", default="2,1,3", metavar="WAIT,WARMUP,ACTIVE",
                    help="torch.profiler schedule for --torch-profile (default 2,1,3)")
    ap.add_argument("--tp-record-shapes", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--no-amp", action="store_true", help="fp32 instead of bf16 autocast")
    ap.add_argument("--print-loss", action="store_true", help="print losses (not bit-reproducible)")
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu (a dry run of the logic)")
    args = ap.parse_args(argv)
    try:
        sched = [int(v) for v in args.tp_schedule.split(",")]
        if len(sched) != 3 or min(sched) < 0 or sched[2] < 1:
            raise ValueError
    except ValueError:
        ap.error("--tp-schedule wants WAIT,WARMUP,ACTIVE, e.g. 2,1,3")
    args.tp_sched = sched
    if args.torch_profile and args.emit_nvtx:
        ap.error("--torch-profile and --emit-nvtx are separate runs")
    if args.torch_profile and sum(sched) > args.steps:
        ap.error("--steps must cover the --tp-schedule (%d steps)" % sum(sched))
    return args


def main(argv=None):
    args = parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", 0)  # set_device needs an index
    mark = nvtx_mark(device) if not args.no_nvtx else (lambda _name: None)
    tag_counters = {}

    def tag(name):
        mark("tag:" + name)
        tag_counters[name] = memory_counters(device)

    if device.type == "cuda":
        # Create the context before the first NVTX call (see the docstring).
        torch.cuda.init()
        torch.cuda.set_device(device)
        torch.zeros(1, device=device)
        torch.cuda.synchronize()
    tag("before_model")
    model = build(args, device)
    tag("after_model")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    tag("after_optimizer")
    batches = make_batches(args.vocab, args.batch, args.seq, device, args.seed)
    nparams = sum(p.numel() for p in model.parameters())
    print(
        "train_gpt: d_model=%d heads=%d layers=%d seq=%d batch=%d vocab=%d attn=%s steps=%d params=%d"
        % (args.d_model, args.heads, args.layers, args.seq, args.batch, args.vocab, args.attn, args.steps,
           nparams)
    )
    sys.stdout.flush()

    prof = None
    if args.torch_profile:
        from torch.profiler import ProfilerActivity, profile, schedule

        acts = [ProfilerActivity.CPU]
        if device.type == "cuda":
            acts.append(ProfilerActivity.CUDA)
        w, u, a = args.tp_sched
        prof = profile(activities=acts, profile_memory=True, record_shapes=args.tp_record_shapes,
                       schedule=schedule(wait=w, warmup=u, active=a, repeat=1))
    ctx = torch.autograd.profiler.emit_nvtx() if args.emit_nvtx else contextlib.nullcontext()
    pctx = prof if prof is not None else contextlib.nullcontext()
    with pctx, ctx:
        for step in range(args.steps):
            x, y = batches[step % len(batches)]
            first = (lambda: tag("after_first_forward")) if step == 0 else None
            loss = train_step(model, opt, x, y, device.type, amp=not args.no_amp, after_forward=first)
            if args.print_loss:
                print("step %d loss %.4f" % (step, loss.item()))
            else:
                print("step %d" % step)
            sys.stdout.flush()
            mark("step")
            if prof is not None:
                prof.step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    tag("after_training")

    if args.alloc_report:
        write_alloc_report(args, device, nparams, tag_counters)
    if prof is not None:
        write_torch_profile(args, prof, device)
    print("done")
    return 0


def write_alloc_report(args, device, nparams, tag_counters):
    rep = {
        "config": {k: v for k, v in vars(args).items() if k != "tp_sched"},
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "params": nparams,
        "env": {k: os.environ.get(k) for k in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING")},
        "tags": tag_counters,
    }
    if device.type == "cuda":
        stats = torch.cuda.memory_stats(device)
        free, total = torch.cuda.mem_get_info(device)
        rep.update({
            "device_name": torch.cuda.get_device_name(device),
            "allocator_backend": torch.cuda.get_allocator_backend(),
            "max_memory_allocated": torch.cuda.max_memory_allocated(device),
            "max_memory_reserved": torch.cuda.max_memory_reserved(device),
            "memory_allocated": torch.cuda.memory_allocated(device),
            "memory_reserved": torch.cuda.memory_reserved(device),
            "requested_bytes_peak": stats.get("requested_bytes.all.peak"),
            "mem_get_info": {"free": free, "total": total, "used": total - free},
            "memory_stats": {k: v for k, v in stats.items() if isinstance(v, (int, float))},
        })
        try:
            rep["memory_summary"] = torch.cuda.memory_summary(device)
        except Exception as e:  # some backends do not summarise
            rep["memory_summary"] = "unavailable: %s" % e
    with open(args.alloc_report, "w") as f:
        json.dump(rep, f, indent=1, sort_keys=True)


def write_torch_profile(args, prof, device):
    avg = prof.key_averages()
    ops = {}
    field = None
    for evt in avg:
        self_mem, f1 = mem_attr(evt, "self_X_memory_usage")
        total_mem, _ = mem_attr(evt, "X_memory_usage")
        field = field or f1
        ops[evt.key] = {
            "count": int(evt.count),
            "self_device_memory_usage": self_mem,
            "device_memory_usage": total_mem,
            "self_cpu_memory_usage": int(getattr(evt, "self_cpu_memory_usage", 0)),
        }
    sort_by = field or ("self_cpu_memory_usage" if device.type != "cuda" else "self_cuda_memory_usage")
    try:
        table = avg.table(sort_by=sort_by, row_limit=15)
    except Exception as e:  # an unknown sort key on some version: still write the numbers
        table = "table unavailable: %s" % e
    out = {"schedule": dict(zip(("wait", "warmup", "active"), args.tp_sched)), "sort_by": sort_by,
           "torch": torch.__version__, "ops": ops, "table": table}
    with open(args.torch_profile, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    sys.exit(main())
