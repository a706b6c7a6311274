#!/usr/bin/env python3
"""One benchmark run: a GPT training loop (samples/train_gpt.py's model),
timed step by step, under one profiling mode. Prints ONE JSON line on stdout.

    python3 bench/workload.py --size small|medium|hf --mode MODE [--warmup 10] [--steps 30]
        [--analyze --trace-dir DIR] [--config LABEL] [--round N] [--fake]

Workloads (fixed, so results compare over time; random tokens, vocab 8192):
  small  (launch-bound): d_model 256, 4 heads, 8 layers, sequence 128, batch 8
  medium:                d_model 1024, 16 heads, 12 layers, sequence 1024, batch 8
both bf16 autocast, AdamW, SDPA attention;
  hf:                    Hugging Face transformers' GPT2LMHeadModel, randomly
                         initialised (no download): 6 layers, d_model 768, 12 heads,
                         eager attention, sequence 512, batch 8, vocab 50257,
                         bf16 autocast, AdamW (needs transformers)

Modes (gmemprof itself is applied from outside, by bench/run_bench.sh, on
mode "none"):
  none                 no profiler in the process
  torch-profiler-full  torch.profiler, CPU+CUDA, profile_memory=True, record_shapes=True,
                       schedule(wait=warmup-1, warmup=1, active=steps): active over the timed steps
  torch-profiler-cuda  torch.profiler, CUDA only, profile_memory=True, same schedule
  memory-history       torch.cuda.memory._record_memory_history() from the first timed step
  memory-history-python  the same with stacks="python" (no C++ frames)

Timing: every step is bracketed by torch.cuda.synchronize() and timed with
perf_counter; the first --warmup steps are not timed. torch.cuda.nvtx.mark("step")
ends every step in every mode (gmemprof's step marker), outside the timed region.
Reported: median / p10 / p90 step time, driver-used device memory
(torch.cuda.mem_get_info) after the last timed step, host peak RSS, and with
--analyze the cost of getting a ranked table from the trace: the profiler's
own stop/processing at window end, key_averages().table() and
export_chrome_trace() (torch.profiler), or the snapshot dump (memory history),
with the trace's size and event count.
Without --analyze a torch.profiler run leaves right after its last timed step
(os._exit), skipping the post-processing that only round 1 measures.
"""
import argparse
import json
import os
import random
import resource
import sys
import time

SIZES = {
    "small": dict(d_model=256, heads=4, layers=8, seq=128, batch=8),
    "medium": dict(d_model=1024, heads=16, layers=12, seq=1024, batch=8),
    "hf": dict(d_model=768, heads=12, layers=6, seq=512, batch=8, vocab=50257),
}
VOCAB = 8192
MODES = ("none", "torch-profiler-full", "torch-profiler-cuda", "memory-history", "memory-history-python")


def percentile(sorted_vals, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_vals:
        return None
    pos = (len(sorted_vals) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


# --toggle-memhist's cycle, as phase_ab.py's wait,warmup,active = 4,1,5
MH_CYCLE, MH_OFF = 10, 4


def step_stats(times_s):
    ms = sorted(t * 1000.0 for t in times_s)
    return {
        "median_ms": percentile(ms, 0.5),
        "p10_ms": percentile(ms, 0.1),
        "p90_ms": percentile(ms, 0.9),
        "mean_ms": sum(ms) / len(ms) if ms else None,
        "min_ms": ms[0] if ms else None,
        "max_ms": ms[-1] if ms else None,
    }


def rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=sorted(SIZES), required=True)
    ap.add_argument("--mode", choices=MODES, default="none")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--analyze", action="store_true", help="measure trace-to-table time and trace size")
    ap.add_argument("--trace-dir", default=".", help="where torch.profiler / memory-history traces go")
    ap.add_argument("--config", default=None, help="label of the configuration (run_bench.sh)")
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fake", action="store_true", help="no torch: print plausible numbers (tests the harness)")
    ap.add_argument("--emit-nvtx", action="store_true", help="the timed loop under torch.autograd.profiler.emit_nvtx()")
    ap.add_argument("--toggle-memhist", choices=("python", "all"), default=None,
                    help="in-process A/B of PyTorch's memory history (stacks python or all): in each cycle of "
                         "%d steps, %d without it, one step turning it on (discarded), %d with it; turned on and off "
                         "between steps, outside the timing (bench/phase_ab.py --schedule %d,1,%d)"
                         % (MH_CYCLE, MH_OFF, MH_CYCLE - MH_OFF - 1, MH_OFF, MH_CYCLE - MH_OFF - 1))
    args = ap.parse_args(argv)
    if args.warmup < 1 or args.steps < 1:
        ap.error("--warmup and --steps must be >= 1")
    return args


def fake_run(args):
    """Synthetic numbers with the real shape, for testing run_bench.sh and
    summarize.py on a machine without a GPU."""
    rnd = random.Random(hash((args.size, args.mode, args.config, args.round)) & 0xFFFFFFFF)
    base = {"small": 9.0, "medium": 48.0, "hf": 30.0}[args.size]
    factor = {"none": 1.0, "torch-profiler-full": 1.7, "torch-profiler-cuda": 1.45,
              "memory-history": 1.1, "memory-history-python": 1.05}[args.mode]
    if args.config == "gmemprof-active":
        factor = 1.008
    elif args.config == "gmemprof-wait":
        factor = 1.001
    times = [base * factor * (1 + rnd.gauss(0, 0.01)) / 1000.0 for _ in range(args.steps)]
    out = {"workload": args.size, "mode": args.mode, "config": args.config or args.mode, "round": args.round,
           "warmup": args.warmup, "steps": args.steps, "fake": True,
           "driver_used_bytes": (1200 if args.size == "small" else 9000) * 2**20
           + (6 * 2**20 if (args.config or "").startswith("gmemprof") else 0)
           + (300 * 2**20 if args.mode.startswith("torch") else 0),
           "driver_total_bytes": 150 * 2**30, "torch_max_allocated": 1000 * 2**20,
           "torch_max_reserved": 1100 * 2**20, "rss_peak_kib_steps": 2_000_000,
           "rss_peak_kib_end": 2_000_000 + (3_000_000 if args.mode.startswith("torch") and args.analyze else 0),
           "wall_s": 7.0, "step_ms": [round(t * 1000, 4) for t in times]}
    out.update(step_stats(times))
    if args.analyze and args.mode.startswith("torch"):
        out.update({"trace_bytes": 80_000_000, "events": 400_000, "stop_s": 6.0, "table_s": 1.5,
                    "export_s": 4.0, "analysis_s": 11.5})
    elif args.analyze and args.mode.startswith("memory-history"):
        out.update({"trace_bytes": 9_000_000, "events": 60_000, "analysis_s": 0.8})
    return out


def build_loop(size, seed):
    """The workload's model, optimizer and batches on cuda:0, and its step
    function: step(i) runs training step i (bench/tracker_split.py shares it)."""
    import torch

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "samples"))
    from train_gpt import GPT, make_batches, train_step

    dev = torch.device("cuda", 0)
    torch.cuda.init()
    torch.cuda.set_device(dev)
    torch.zeros(1, device=dev)  # the context exists before the first NVTX mark
    cfg = SIZES[size]
    torch.manual_seed(seed)
    if size == "hf":
        return dev, hf_step(cfg, dev, seed)
    model = GPT(VOCAB, cfg["d_model"], cfg["heads"], cfg["layers"], cfg["seq"], "sdpa").to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    batches = make_batches(VOCAB, cfg["batch"], cfg["seq"], dev, seed)

    def step(i):
        x, y = batches[i % len(batches)]
        train_step(model, opt, x, y, "cuda")

    return dev, step


def hf_step(cfg, dev, seed):
    """A Hugging Face GPT-2 as an unmodified user script trains it."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    conf = GPT2Config(vocab_size=cfg["vocab"], n_positions=cfg["seq"], n_embd=cfg["d_model"],
                      n_layer=cfg["layers"], n_head=cfg["heads"])
    conf._attn_implementation = "eager"
    model = GPT2LMHeadModel(conf).to(dev)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator(device="cpu").manual_seed(seed)
    batches = [torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), generator=g).to(dev) for _ in range(4)]

    def step(i):
        x = batches[i % len(batches)]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def real_run(args, t_start):
    import torch

    dev, step = build_loop(args.size, args.seed)
    mark = torch.cuda.nvtx.mark
    total = args.warmup + args.steps

    prof = None
    if args.mode.startswith("torch-profiler"):
        from torch.profiler import ProfilerActivity, profile, schedule

        full = args.mode == "torch-profiler-full"
        acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if full else [ProfilerActivity.CUDA]
        prof = profile(activities=acts, profile_memory=True, record_shapes=full,
                       schedule=schedule(wait=args.warmup - 1, warmup=1, active=args.steps, repeat=1))
        prof.start()

    times = []
    out = {"workload": args.size, "mode": args.mode, "config": args.config or args.mode, "round": args.round,
           "warmup": args.warmup, "steps": args.steps, "torch": torch.__version__,
           "device": torch.cuda.get_device_name(dev)}
    nvtx_ctx = torch.autograd.profiler.emit_nvtx() if args.emit_nvtx else None
    if nvtx_ctx is not None:
        nvtx_ctx.__enter__()
    for i in range(total):
        if args.toggle_memhist and i % MH_CYCLE == MH_OFF:
            torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks=args.toggle_memhist)
        if args.mode == "memory-history" and i == args.warmup:
            torch.cuda.memory._record_memory_history(max_entries=1_000_000)
        if args.mode == "memory-history-python" and i == args.warmup:
            torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step(i)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        if i >= args.warmup:
            times.append(t1 - t0)
        if i == total - 1:
            free, tot = torch.cuda.mem_get_info(dev)
            out["driver_used_bytes"] = tot - free
            out["driver_total_bytes"] = tot
            out["rss_peak_kib_steps"] = rss_kib()
        mark("step")
        if args.toggle_memhist and i % MH_CYCLE == MH_CYCLE - 1:
            torch.cuda.memory._record_memory_history(enabled=None)
        if prof is not None:
            if i == total - 1:
                if not args.analyze:
                    break  # leave before the window-end processing (see the docstring)
                ts = time.perf_counter()
                prof.step()  # the active window ends here: the profiler stops and processes
                out["stop_s"] = time.perf_counter() - ts
            else:
                prof.step()
    if nvtx_ctx is not None:
        nvtx_ctx.__exit__(None, None, None)
    out.update(step_stats(times))
    out["step_ms"] = [round(t * 1000.0, 4) for t in times]
    out["torch_max_allocated"] = torch.cuda.max_memory_allocated(dev)
    out["torch_max_reserved"] = torch.cuda.max_memory_reserved(dev)

    if prof is not None and args.analyze:
        prof.stop()
        avg_t = time.perf_counter()
        avg = prof.key_averages()
        key = "self_device_memory_usage" if avg and hasattr(avg[0], "self_device_memory_usage") \
            else "self_cuda_memory_usage"
        table = avg.table(sort_by=key, row_limit=10)
        out["table_s"] = time.perf_counter() - avg_t
        path = os.path.join(args.trace_dir, "tp-%s-%s.json" % (args.size, args.mode))
        ex_t = time.perf_counter()
        prof.export_chrome_trace(path)
        out["export_s"] = time.perf_counter() - ex_t
        out["analysis_s"] = out.get("stop_s", 0.0) + out["table_s"] + out["export_s"]
        out["trace_bytes"] = os.path.getsize(path)
        with open(path, "rb") as f:
            out["events"] = f.read().count(b'"ph"')
        out["table_rows"] = len(table.splitlines())
        os.unlink(path)  # hundreds of MB; only its size matters here
    elif args.mode.startswith("memory-history") and args.analyze:
        path = os.path.join(args.trace_dir, "memhist-%s.pickle" % args.size)
        ts = time.perf_counter()
        torch.cuda.memory._dump_snapshot(path)
        out["analysis_s"] = time.perf_counter() - ts  # the dump only; viewing needs a browser
        snap = torch.cuda.memory._snapshot()
        out["trace_bytes"] = os.path.getsize(path)
        out["events"] = sum(len(t) for t in snap.get("device_traces", []))
        os.unlink(path)
    if args.mode.startswith("memory-history"):
        torch.cuda.memory._record_memory_history(enabled=None)
    out["rss_peak_kib_end"] = rss_kib()
    out["wall_s"] = time.perf_counter() - t_start
    return out, prof is not None and not args.analyze


def main(argv=None):
    t_start = time.perf_counter()
    args = parse_args(argv)
    if args.fake:
        out, quick_exit = fake_run(args), False
    else:
        out, quick_exit = real_run(args, t_start)
    sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
    sys.stdout.flush()
    if quick_exit:
        os._exit(0)  # skip the torch.profiler teardown; nothing else is pending
    return 0


if __name__ == "__main__":
    sys.exit(main())
