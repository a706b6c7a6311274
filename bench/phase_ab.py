#!/usr/bin/env python3
"""In-process A/B: the active window's cost, step by step, in ONE process.

    phase_ab.py --schedule W,U,A --first-step K RESULT.json [RESULT.json ...] [--key step_ms]

A process run under `gmemprof --schedule wait=W,warmup=U,active=A,repeat=0`
alternates, cycle after cycle, W steps in the wait phase (allocations
tracked, kernels not collected), U warmup steps (collected, discarded) and A
active steps (collected). Comparing its own active steps with its own wait
steps removes what dominates cross-process comparisons on a GPU machine
(the same unprofiled configuration moves by 5-20% from process to process:
clocks, CPU placement, memory layout) and leaves the window's cost.

Each RESULT.json is a file holding the JSON line a run printed
(bench/workload.py: "step_ms", timed steps starting at loop index
--first-step = its --warmup; bench/launch_cost.c: "enqueue_ns" and
"total_ns", from loop index 0). Loop index i is step i of the profiler
(steps are counted by the end-of-step marks, from 0), so its phase is
(i mod (W+U+A)): < W wait, < W+U warmup, else active.

Per file and key it prints the median of the active steps, the median of
the wait steps, their ratio, and the per-cycle ratios' median and min-max
(each cycle: median of its active steps / median of its wait steps, so a
slow drift over the run cancels). One JSON object per file and key on
stdout with --json.
"""
import argparse
import json
import sys


def median(v):
    v = sorted(v)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def phase_of(i, w, u, a):
    c = i % (w + u + a)
    return "wait" if c < w else ("warmup" if c < w + u else "active")


def reduce(values, first, w, u, a):
    """values[j] is loop index first+j. Returns the figures (see the module doc)."""
    by_cycle = {}
    for j, x in enumerate(values):
        i = first + j
        ph = phase_of(i, w, u, a)
        if ph == "warmup":
            continue
        by_cycle.setdefault(i // (w + u + a), {"wait": [], "active": []})[ph].append(x)
    act = [x for c in by_cycle.values() for x in c["active"]]
    wai = [x for c in by_cycle.values() for x in c["wait"]]
    cyc = [median(c["active"]) / median(c["wait"]) for c in by_cycle.values()
           if c["active"] and c["wait"] and median(c["wait"]) > 0]
    ma, mw = median(act), median(wai)
    return {
        "active_steps": len(act), "wait_steps": len(wai), "cycles": len(cyc),
        "active_median": ma, "wait_median": mw,
        "ratio": (ma / mw) if ma is not None and mw else None,
        "cycle_ratio_median": median(cyc),
        "cycle_ratio_min": min(cyc) if cyc else None,
        "cycle_ratio_max": max(cyc) if cyc else None,
    }


def load(path):
    with open(path, errors="replace") as f:
        lines = [ln for ln in f if ln.strip().startswith("{")]
    if not lines:
        raise ValueError("%s: no JSON line (did the run fail? see its stderr)" % path)
    return json.loads(lines[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--schedule", required=True, help="W,U,A of the run's wait/warmup/active")
    ap.add_argument("--first-step", type=int, default=None,
                    help="loop index of the first value (default: the run's 'warmup' field, else 0)")
    ap.add_argument("--key", action="append", help="which arrays (default: all of step_ms, enqueue_ns, total_ns)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        w, u, a = (int(x) for x in args.schedule.split(","))
        if w < 1 or a < 1 or u < 0:
            raise ValueError
    except ValueError:
        ap.error("--schedule wants W,U,A with W >= 1, U >= 0, A >= 1, not %r" % args.schedule)
    keys = args.key or ["step_ms", "enqueue_ns", "total_ns"]
    rc = 0
    for path in args.results:
        try:
            run = load(path)
        except (OSError, ValueError) as e:
            print("phase_ab: %s" % e, file=sys.stderr)
            rc = 1
            continue
        first = args.first_step if args.first_step is not None else int(run.get("warmup", 0) or 0)
        if "enqueue_ns" in run and args.first_step is None:
            first = 0
        for k in keys:
            if k not in run:
                continue
            r = reduce(run[k], first, w, u, a)
            r.update({"file": path, "key": k})
            if args.json:
                print(json.dumps(r, sort_keys=True))
            elif r["ratio"] is None:
                print("%s %s: not enough steps in both phases" % (path, k))
            else:
                print("%s %-10s active %10.4f  wait %10.4f  ratio %.4f  per-cycle %.4f [%.4f-%.4f] (%d cycles)"
                      % (path, k, r["active_median"], r["wait_median"], r["ratio"], r["cycle_ratio_median"],
                         r["cycle_ratio_min"], r["cycle_ratio_max"], r["cycles"]))
    return rc


if __name__ == "__main__":
    sys.exit(main())
