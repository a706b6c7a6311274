#!/usr/bin/env python3
"""Benchmark bookkeeping for bench/run_bench.sh (plain Python, no torch).

    summarize.py merge --line-file STDOUT --config C --round N --workload W --rc RC --wall S
                       [--trace T --check-trace BIN --analyzer BIN] >> runs.jsonl
    summarize.py report runs.jsonl [--meta env.json] [--md bench.md] [--json bench.json]

merge: takes the JSON line a workload.py run printed (the last line starting
with "{"), adds what only the harness knows -- the process's exit status and
wall time and, for gmemprof runs, the trace's size, its record count, the
profiler's own device memory (STATS) and the wall time of `gmem-analyze TRACE`
(the default ranked table) -- and prints one JSON line. A run that printed
nothing still yields a line, with "error".

report: per workload and configuration, over the rounds:
  step ratio       median step time / the unprofiled run's of the same round;
                   the median of those ratios, and their min-max spread
  device memory    driver-used bytes after the last timed step minus the
                   unprofiled run's of the same round (median)
  host peak RSS    ru_maxrss at the end of the process (median)
  trace            bytes; bytes per recorded step and per event
  trace -> table   gmem-analyze's wall time, or torch.profiler's stop +
                   key_averages().table() + export_chrome_trace(), or the
                   memory-history snapshot dump
and the targets of the benchmarks issue (gmemprof active <= 1.02 small,
<= 1.01 medium; outside the window <= 1.005; device memory added <= 16 MiB)
and of the PyTorch bridge (small: at most 1 point above gmemprof-nobridge).
"""
import argparse
import json
import os
import subprocess
import sys
import time

CONFIG_ORDER = ["none", "gmemprof-wait", "gmemprof-active", "gmemprof-noops", "gmemprof-nobridge", "gmemprof-emitnvtx",
                "gmemprof-stacks", "gmemprof-nolines", "gmemprof-nomodules", "gmemprof-gpu", "gmemprof-oom", "torch-profiler-full", "torch-profiler-cuda",
                "memory-history", "memory-history-python"]
TARGETS = [
    # (workload, config, metric, limit, text)
    ("small", "gmemprof-active", "ratio", 1.02, "active-window step ratio <= 1.02 (small)"),
    ("medium", "gmemprof-active", "ratio", 1.01, "active-window step ratio <= 1.01 (medium)"),
    ("small", "gmemprof-wait", "ratio", 1.005, "outside-window step ratio <= 1.005 (small)"),
    ("medium", "gmemprof-wait", "ratio", 1.005, "outside-window step ratio <= 1.005 (medium)"),
    ("small", "gmemprof-active", "mem_added", 16 * 2**20, "device memory added <= 16 MiB (small)"),
    ("medium", "gmemprof-active", "mem_added", 16 * 2**20, "device memory added <= 16 MiB (medium)"),
    # the PyTorch bridge (gmemprof-active loads it; gmemprof-nobridge is the same run without it)
    ("small", "gmemprof-active", "over:gmemprof-nobridge", 0.01,
     "bridge: active ratio - ratio without the bridge <= 0.01 (small)"),
    # the bridge's op ranges (on in gmemprof-active; gmemprof-noops is the same run without them)
    ("small", "gmemprof-active", "ratio", 1.10, "op ranges on: active step ratio <= 1.10 (small)"),
    ("medium", "gmemprof-active", "ratio", 1.02, "op ranges on: active step ratio <= 1.02 (medium)"),
] + [
    # modules and lines (issue 41): the default recording costs no more than the memory history
    # with Python stacks, and whole stacks no more than the memory history's default
    t for w in ("small", "medium", "hf") for t in (
        (w, "gmemprof-active", "over:memory-history-python", 0.0,
         "default (tensors, ops, modules, lines) - memory-history-python <= 0 (%s)" % w),
        (w, "gmemprof-stacks", "over:memory-history", 0.0,
         "--stacks python - memory-history <= 0 (%s)" % w))
]


def median(vals):
    v = sorted(x for x in vals if x is not None)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def last_json_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip().startswith("{")]
    except OSError:
        return None
    for ln in reversed(lines):
        try:
            return json.loads(ln)
        except ValueError:
            continue
    return None


def cmd_merge(a):
    rec = last_json_line(a.line_file) or {"error": "no JSON line from workload.py"}
    rec.update({"config": a.config, "round": a.round, "workload": rec.get("workload", a.workload), "rc": a.rc,
                "process_wall_s": a.wall})
    if a.trace:
        rec["trace_path"] = os.path.basename(a.trace)
        try:
            rec["trace_bytes"] = os.path.getsize(a.trace)
        except OSError:
            rec["trace_bytes"] = None
            rec["error"] = rec.get("error", "") + " no trace file"
        if a.check_trace and rec.get("trace_bytes"):
            try:
                p = subprocess.run([a.check_trace, a.trace, "--summary"], capture_output=True, timeout=120,
                                   text=True)
                s = json.loads(p.stdout) if p.stdout.strip() else {}
            except (OSError, ValueError, subprocess.TimeoutExpired):
                s = {}
            rec["events"] = s.get("records")
            rec["trace_kernels"] = s.get("kernels")
            rec["trace_windows"] = len(s.get("windows", []))
            rec["trace_active_steps"] = (s.get("steps") or {}).get("active_steps")
            st = s.get("stats") or {}
            rec["own_device_bytes"] = st.get("own_device_bytes")
            rec["own_host_bytes"] = st.get("own_host_bytes")
            rec["dropped"] = (st.get("dropped_cupti") or 0) + (st.get("dropped_writer") or 0) if st else None
        if a.analyzer and rec.get("trace_bytes"):
            t0 = time.perf_counter()
            try:
                p = subprocess.run([a.analyzer, a.trace], capture_output=True, timeout=300)
                rec["analysis_rc"] = p.returncode
            except (OSError, subprocess.TimeoutExpired) as e:
                rec["analysis_rc"] = str(e)
            rec["analysis_s"] = time.perf_counter() - t0
    sys.stdout.write(json.dumps(rec, sort_keys=True) + "\n")
    return 0


def load_runs(path):
    runs = []
    with open(path) as f:
        for ln in f:
            ln = ln.strip()
            if ln:
                try:
                    runs.append(json.loads(ln))
                except ValueError:
                    pass
    return runs


def summarize(runs):
    base = {}
    for r in runs:
        if r.get("config") == "none" and r.get("median_ms"):
            base[(r["workload"], r["round"])] = r
    groups = {}
    for r in runs:
        groups.setdefault((r.get("workload"), r.get("config")), []).append(r)
    rows = []
    for (w, c), rs in groups.items():
        ratios, added, rss, meds, tbytes, ev, ana = [], [], [], [], [], [], []
        errors = [r.get("error") or "exit %s" % r.get("rc") for r in rs
                  if r.get("error") or (r.get("rc") not in (0, None))]
        for r in rs:
            b = base.get((w, r.get("round")))
            if r.get("median_ms"):
                meds.append(r["median_ms"])
                if b:
                    ratios.append(r["median_ms"] / b["median_ms"])
            if b and r.get("driver_used_bytes") is not None and b.get("driver_used_bytes") is not None:
                added.append(r["driver_used_bytes"] - b["driver_used_bytes"])
            rss.append(r.get("rss_peak_kib_end"))
            if r.get("trace_bytes"):
                tbytes.append(r["trace_bytes"])
            if r.get("events"):
                ev.append(r["events"])
            if r.get("analysis_s") is not None:
                ana.append(r["analysis_s"])
        steps = rs[0].get("steps") or 30
        warm = rs[0].get("warmup") or 10
        tb = median(tbytes)
        # a gmemprof-wait trace covers every step (nothing is active); the others the timed steps
        rec_steps = (steps + warm) if c == "gmemprof-wait" else steps
        rows.append({
            "workload": w, "config": c, "rounds": len(rs), "errors": errors,
            "median_step_ms": median(meds),
            "ratio_median": median(ratios), "ratio_min": min(ratios) if ratios else None,
            "ratio_max": max(ratios) if ratios else None, "ratios": ratios,
            "mem_added_bytes": median(added), "rss_peak_kib": median(rss),
            "trace_bytes": tb, "events": median(ev),
            "bytes_per_step": tb / rec_steps if tb else None,
            "bytes_per_event": tb / median(ev) if tb and ev else None,
            "analysis_s": median(ana),
            "own_device_bytes": median([r.get("own_device_bytes") for r in rs]),
            "dropped": max([r.get("dropped") or 0 for r in rs]) if c.startswith("gmemprof") else None,
        })
    order = {c: i for i, c in enumerate(CONFIG_ORDER)}
    wl_order = {"small": 0, "medium": 1, "hf": 2}
    rows.sort(key=lambda r: (wl_order.get(r["workload"], 3), order.get(r["config"], 99)))
    targets = []
    for w, c, metric, limit, text in TARGETS:
        row = next((r for r in rows if r["workload"] == w and r["config"] == c), None)
        if metric.startswith("over:"):  # points above another configuration's ratio (only when both ran)
            base = next((r for r in rows if r["workload"] == w and r["config"] == metric[5:]), None)
            ok = row and base and row["ratio_median"] is not None and base["ratio_median"] is not None
            val = row["ratio_median"] - base["ratio_median"] if ok else None
        else:
            val = None if row is None else row["ratio_median" if metric == "ratio" else "mem_added_bytes"]
        targets.append({"target": text, "metric": metric, "value": val, "limit": limit,
                        "result": "n/a" if val is None else ("PASS" if val <= limit else "MISS"),
                        "by": None if val is None else val - limit})
    return rows, targets


def fmt(v, spec="%.3f"):
    return "n/a" if v is None else spec % v


def fmt_bytes(v):
    if v is None:
        return "n/a"
    a = abs(v)
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if a >= div:
            return "%.1f %s" % (v / div, unit)
    return "%d B" % v


def markdown(rows, targets, meta):
    L = ["# gmemprof benchmark", ""]
    if meta:
        L.append("Date %s; GPU %s; driver %s; torch %s; command `%s`; rounds %s." % (
            meta.get("date"), meta.get("gpu"), meta.get("driver"), meta.get("torch"), meta.get("command"),
            meta.get("rounds")))
        L.append("")
    L.append("| workload | configuration | rounds | step ratio median [min-max] | median step | device memory vs "
             "unprofiled | host peak RSS | trace | bytes/step | bytes/event | trace -> ranked table |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = "1 (reference)" if r["config"] == "none" else "%s [%s-%s]" % (
            fmt(r["ratio_median"], "%.4f"), fmt(r["ratio_min"], "%.4f"), fmt(r["ratio_max"], "%.4f"))
        L.append("| %s | %s | %d%s | %s | %s ms | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], r["config"], r["rounds"], " (%d errors)" % len(r["errors"]) if r["errors"] else "",
            ratio, fmt(r["median_step_ms"], "%.2f"),
            "0 (reference)" if r["config"] == "none" else fmt_bytes(r["mem_added_bytes"]),
            fmt_bytes(r["rss_peak_kib"] * 1024 if r["rss_peak_kib"] is not None else None),
            fmt_bytes(r["trace_bytes"]), fmt(r["bytes_per_step"], "%.0f"), fmt(r["bytes_per_event"], "%.2f"),
            fmt(r["analysis_s"], "%.2f s")))
    L.append("")
    L.append("| target | value | result |")
    L.append("|---|---|---|")
    for t in targets:
        v = t["value"]
        vs = "n/a" if v is None else (fmt_bytes(v) if t.get("metric") == "mem_added" else "%.4f" % v)
        L.append("| %s | %s | %s |" % (t["target"], vs, t["result"]))
    return "\n".join(L) + "\n"


def cmd_report(a):
    runs = load_runs(a.runs)
    meta = None
    if a.meta:
        try:
            with open(a.meta) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            meta = None
    rows, targets = summarize(runs)
    md = markdown(rows, targets, meta)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "rows": rows, "targets": targets, "runs": runs}, f, indent=1, sort_keys=True)
    sys.stdout.write(md)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--line-file", required=True)
    m.add_argument("--config", required=True)
    m.add_argument("--round", type=int, required=True)
    m.add_argument("--workload", required=True)
    m.add_argument("--rc", type=int, default=0)
    m.add_argument("--wall", type=float, default=None)
    m.add_argument("--trace")
    m.add_argument("--check-trace")
    m.add_argument("--analyzer")
    r = sub.add_parser("report")
    r.add_argument("runs")
    r.add_argument("--meta")
    r.add_argument("--md")
    r.add_argument("--json")
    a = ap.parse_args(argv)
    return cmd_merge(a) if a.cmd == "merge" else cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
