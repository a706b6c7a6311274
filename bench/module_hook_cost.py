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
  callwrap   Module.__call__ replaced by a Python function shaped as the
             bridge's wrapper: torch.compiler.is_compiling(), then two calls
             of C builtins (stand-ins for the bridge's C functions) around
             the original; what seeing a call costs without the global
             hooks' path through Module._call_impl

The variants take turns step by step (the order rotated every cycle), so a
drift of the host falls on all of them alike; each step is timed between
two torch.cuda.synchronize(). A round is --steps steps of each variant.
Prints one JSON line per round and a summary: per variant the median step
over all rounds, its ratio to bare's, the module calls per step, and the
extra time per module call. The bridge's hooks are C functions, so its
hook bodies cost less than `hooks` here; the path through _call_impl is the
same. The bridge's own bodies (a module's lookup, its range) come on top
of either.
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
    from torch.compiler import is_compiling
    enter, leave = callable, id  # C builtins, as the bridge's are

    def wrapped(self, *args, **kwargs):
        if is_compiling() or not enter(self):
            return orig_call(self, *args, **kwargs)
        try:
            return orig_call(self, *args, **kwargs)
        finally:
            leave(self)

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
    times = {v: [] for v in variants}
    n = 10
    for r in range(a.rounds):
        for k in range(a.steps * len(variants)):
            # step by step in turn, the order rotated each cycle: drift and
            # host load fall on every variant alike
            cyc = k // len(variants)
            v = variants[(k + cyc) % len(variants)]
            handles = install(v)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            step(n)
            torch.cuda.synchronize()
            times[v].append(time.perf_counter() - t0)
            uninstall(v, handles)
            n += 1
        print(json.dumps({"round": r, "median_ms": {v: statistics.median(times[v][-a.steps:]) * 1e3
                                                    for v in variants}}), flush=True)
    med = {v: statistics.median(times[v]) * 1e3 for v in variants}
    summary = {"size": a.size, "rounds": a.rounds, "steps_per_variant": len(times["bare"]),
               "module_calls_per_step": per_step, "device": torch.cuda.get_device_name(0),
               "torch": torch.__version__, "median_ms": med,
               "ratio": {v: med[v] / med["bare"] for v in variants},
               "us_per_module_call": {v: (med[v] - med["bare"]) * 1e3 / max(per_step, 1) for v in variants}}
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
