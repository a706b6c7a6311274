#!/usr/bin/env python3
"""What seeing every nn.Module call costs a training loop, inside one process.

    python3 bench/module_hook_cost.py [--size small|medium|hf] [--rounds 8] [--steps 20]

No profiler runs. The loop of bench/workload.py (same model, optimizer and
batches) is timed step by step in variants that alternate within the
process, so they share its host load, clocks and caches:

  bare       nothing registered
  hooks      torch's global module hooks as gmemprof's bridge registers them
             (register_module_forward_pre_hook, register_module_forward_hook
             with always_call=True), here as Python functions that return None
  callwrap   Module.__call__ replaced by a Python function that calls two
             no-op functions around the original: what a hook costs without
             the global hooks' path through Module._call_impl

Each round runs every variant in turn (order rotated per round): 3 steps to
settle, then --steps timed steps, each between two torch.cuda.synchronize().
Prints one JSON line per round and a summary: per variant the median over
rounds of (variant's median step / bare's median step in the same round),
the module calls per step, and the extra time per module call. The bridge's hooks are C functions, so its
hook bodies cost less than `hooks` here; the path through _call_impl is the
same.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="small")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()

    import torch
    from torch.nn.modules import module as nnmod
    from workload import build_loop

    _, step = build_loop(a.size, 0)
    for i in range(10):
        step(i)
    torch.cuda.synchronize()

    calls = [0]

    def count_pre(m, args):
        calls[0] += 1

    h = nnmod.register_module_forward_pre_hook(count_pre)
    step(0)
    torch.cuda.synchronize()
    h.remove()
    per_step = calls[0]

    def pre(m, args):
        return None

    def post(m, args, out):
        return None

    orig_call = torch.nn.Module.__call__

    def wrapped(self, *args, **kwargs):
        pre(self, args)
        try:
            return orig_call(self, *args, **kwargs)
        finally:
            post(self, args, None)

    def install(v):
        if v == "hooks":
            return [nnmod.register_module_forward_hook(post, always_call=True),
                    nnmod.register_module_forward_pre_hook(pre)]
        if v == "callwrap":
            torch.nn.Module.__call__ = wrapped
        return []

    def uninstall(v, handles):
        for x in handles:
            x.remove()
        if v == "callwrap":
            torch.nn.Module.__call__ = orig_call

    variants = ["bare", "hooks", "callwrap"]
    ratios = {v: [] for v in variants}
    extra_us = {v: [] for v in variants}  # per module call, over bare in the same round
    n = 10
    for r in range(a.rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        med = {}
        for v in order:
            handles = install(v)
            times = []
            for i in range(3 + a.steps):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                step(n)
                torch.cuda.synchronize()
                if i >= 3:
                    times.append(time.perf_counter() - t0)
                n += 1
            uninstall(v, handles)
            med[v] = statistics.median(times) * 1e3
        for v in variants:
            ratios[v].append(med[v] / med["bare"])
            extra_us[v].append((med[v] - med["bare"]) * 1e3 / max(per_step, 1))
        print(json.dumps({"round": r, "median_ms": med}), flush=True)
    summary = {"size": a.size, "rounds": a.rounds, "steps": a.steps, "module_calls_per_step": per_step,
               "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "ratio_median": {v: statistics.median(ratios[v]) for v in variants},
               "ratio_min": {v: min(ratios[v]) for v in variants},
               "ratio_max": {v: max(ratios[v]) for v in variants},
               "us_per_module_call": {v: statistics.median(extra_us[v]) for v in variants}}
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
