#!/usr/bin/env python3
"""Turns the files run_all.sh left in its work folder into $OUT/report.md and
$OUT/report.json: every number next to its reference, and PASS/FAIL.

    gpu_report.py --work WORK --out OUT

Inputs in WORK (names fixed by run_all.sh; any may be missing, which is
then a FAIL or "n/a", never a crash):
  steps.tsv                 name, exit status, seconds of each run_all step
  env.txt                   nvidia-smi, driver, torch versions
  ctest.log                 `ctest -L gpu` output
  mode_<m>.{rc,stdout}, mode_<m>.alloc.json, mode_<m>.summary.json, mode_<m>.analyze.json
                            m in caching, async, expandable, nocache
  plain.{rc,stdout}, plain.alloc.json        unprofiled default-allocator run
  {naive,sdpa}.{rc,stdout,alloc.json,summary.json,analyze.json}, diff.txt, diff.json
  cmp_gm.ranges.json, cmp_gm.summary.json, cmp_tp_caching.json, cmp_tp_async.json
  *.zst                     traces (sizes)

The rules (docs/attribution.md holds the why):
  peak vs PyTorch: caching modes (default, expandable_segments) compare the
  trace's peak of live device memory with max_memory_reserved(); per-tensor
  modes (backend:cudaMallocAsync, PYTORCH_NO_CUDA_MEMORY_CACHING=1) with
  max_memory_allocated(). With caching off PyTorch keeps no statistics
  (max_memory_allocated() is 0), so the reference is then the peak of
  requested bytes (memory_stats "requested_bytes.all.peak") of the unprofiled
  default-allocator run of the same program: the same tensors in the same order.
  Tolerance 1% of the reference.
  The trace sees more than PyTorch's allocator: libraries allocate beside it
  (cuBLAS/cuBLASLt workspaces through plain cudaMalloc, module statics), and
  PyTorch's counters never include those. So the compared quantity is the
  allocator's share of the trace's peak:
    async      the async_pool bytes live at the trace's peak (same run)
    expandable the vmm bytes live at the trace's peak (same run)
    caching, nocache  the peak minus the library bytes, where library bytes =
               the non-async_pool device bytes live at the async run's peak
               (the same program and libraries; PyTorch's segments and
               cuBLAS's workspaces are both plain cudaMalloc in these modes,
               so one run cannot tell them apart).
  naive vs sdpa: (peak naive - peak sdpa) within 1% of the difference of
  max_memory_allocated() (both backend:cudaMallocAsync).
"""
import argparse
import json
import os
import sys

MODES = [
    # name, PyTorch setting, reference counter
    ("caching", "default caching allocator", "max_memory_reserved"),
    ("async", "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync", "max_memory_allocated"),
    ("expandable", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "max_memory_reserved"),
    ("nocache", "PYTORCH_NO_CUDA_MEMORY_CACHING=1", "max_memory_allocated"),
]
MIB = 1024.0 * 1024.0
TOL = 0.01


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def read_text(path, limit=None):
    try:
        with open(path, errors="replace") as f:
            s = f.read()
    except OSError:
        return None
    return s if limit is None else s[:limit]


def read_rc(path):
    s = read_text(path)
    try:
        return int(s.strip()) if s is not None else None
    except ValueError:
        return None


def file_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def mib(v):
    return "n/a" if v is None else "%.2f MiB" % (v / MIB)


def bridge_checks(rep, m, an, ar, row):
    """The PyTorch bridge in a caching mode: gmem-analyze's allocated and
    reserved peaks of device 0 are torch.cuda's max_memory_allocated() and
    max_memory_reserved() of the same run, exactly."""
    fw = [d for d in ((an or {}).get("summary") or {}).get("framework") or [] if d.get("device") == 0]
    got_a = fw[0].get("allocated_peak_bytes") if fw else None
    got_r = fw[0].get("reserved_peak_bytes") if fw else None
    row["bridge_allocated_peak"], row["bridge_reserved_peak"] = got_a, got_r
    why = "" if fw else " (no PyTorch blocks in the trace: the bridge was not built or not loaded)"
    for name, got, want in (("allocated", got_a, ar.get("max_memory_allocated")),
                            ("reserved", got_r, ar.get("max_memory_reserved"))):
        rep.add("mode %s: bridge %s peak = max_memory_%s()" % (m, name, name), got is not None and got == want,
                "gmem-analyze %s vs torch.cuda %s%s" % (got, want, why))


def find_peak(obj):
    """The analyzer's peak in its --format json output, without knowing its
    schema: the largest integer whose key names a peak in bytes, preferring
    the summary section. Returns (value, path) or (None, None)."""
    found = []

    def walk(o, path):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "framework":
                    continue  # the PyTorch bridge's numbers: checked on their own
                p = path + "." + str(k) if path else str(k)
                kl = str(k).lower()
                if isinstance(v, bool):
                    continue
                if isinstance(v, int) and "peak" in kl and not any(
                        w in kl for w in ("step", "ts", "time", "index", "count", "kernel", "window", "device_id", "host",
                                   "driver", "used", "sample")):
                    found.append((p, v))
                else:
                    walk(v, p)
        elif isinstance(o, list):
            for i, v in enumerate(o[:64]):
                walk(v, "%s[%d]" % (path, i))

    walk(obj, "")
    if not found:
        return None, None
    summ = [c for c in found if "summary" in c[0].lower()]
    pool = summ or found
    path, val = max(pool, key=lambda c: c[1])
    return val, path


class Report:
    def __init__(self):
        self.checks = []  # (name, ok or None for info, detail)

    def add(self, name, ok, detail):
        self.checks.append((name, ok, detail))
        return ok

    def counts(self):
        p = sum(1 for c in self.checks if c[1] is True)
        f = sum(1 for c in self.checks if c[1] is False)
        return p, f


def rel(a, b):
    if a is None or b is None or b == 0:
        return None
    return (a - b) / float(b)


def parse_ctest(log):
    """Per-test results from ctest's progress lines."""
    res = {}
    if not log:
        return res
    for line in log.splitlines():
        line = line.strip()
        if "Test #" not in line or ":" not in line:
            continue
        try:
            rest = line.split(":", 1)[1].strip()
            name = rest.split()[0]
        except IndexError:
            continue
        if "Passed" in line:
            res[name] = "passed"
        elif "Skipped" in line or "Not Run" in line:
            res[name] = "skipped"
        elif "Failed" in line or "Timeout" in line or "Exception" in line:
            res[name] = "failed"
    return res


def build(work, out):
    rep = Report()
    data = {"work": work}
    j = lambda name: load_json(os.path.join(work, name))  # noqa: E731
    steps = []
    for line in (read_text(os.path.join(work, "steps.tsv")) or "").splitlines():
        parts = line.split("\t")
        if len(parts) >= 3:
            steps.append({"step": parts[0], "rc": parts[1], "seconds": parts[2]})
    data["steps"] = steps
    data["env"] = read_text(os.path.join(work, "env.txt"), 4000)

    # 1. build and ctest
    b = [s for s in steps if s["step"] == "build"]
    rep.add("build", bool(b) and b[0]["rc"] == "0", "cmake configure + build (Release, ninja)")
    ct = parse_ctest(read_text(os.path.join(work, "ctest.log")))
    data["ctest"] = ct
    npass = sum(1 for v in ct.values() if v == "passed")
    nfail = sum(1 for v in ct.values() if v == "failed")
    nskip = sum(1 for v in ct.values() if v == "skipped")
    rep.add("ctest -L gpu", bool(ct) and nfail == 0 and nskip == 0,
            "%d passed, %d failed, %d skipped of %d" % (npass, nfail, nskip, len(ct)))
    for name, st in sorted(ct.items()):
        if st != "passed":
            rep.add("ctest " + name, False, st)
    st = read_rc(os.path.join(work, "selftest.rc"))
    if st is not None:
        rep.add("check_trace self-test (CPU)", st == 0, "ctest -R check_trace_selftest exit %s" % st)

    # 2. allocator modes
    plain = j("plain.alloc.json") or {}
    plain_out = read_text(os.path.join(work, "plain.stdout"))
    rep.add("unprofiled reference run", read_rc(os.path.join(work, "plain.rc")) == 0 and bool(plain),
            "train_gpt.py, default allocator, exit %s" % read_rc(os.path.join(work, "plain.rc")))
    modes = []
    async_sm = j("mode_async.summary.json") or {}
    a_peak = (async_sm.get("peak") or {})
    library_bytes = None
    if a_peak.get("device_bytes") is not None and (a_peak.get("by_source") or {}).get("async_pool") is not None:
        library_bytes = a_peak["device_bytes"] - a_peak["by_source"]["async_pool"]
    data["library_bytes"] = library_bytes
    for m, setting, ref_name in MODES:
        rc = read_rc(os.path.join(work, "mode_%s.rc" % m))
        ar = j("mode_%s.alloc.json" % m) or {}
        sm = j("mode_%s.summary.json" % m) or {}
        an = j("mode_%s.analyze.json" % m)
        trace_peak = (sm.get("peak") or {}).get("device_bytes")
        an_peak, an_path = find_peak(an) if an is not None else (None, None)
        ref = ar.get(ref_name)
        ref_src = "%s() of this run" % ref_name
        if m == "nocache" and not ref:
            ref = plain.get("requested_bytes_peak")
            ref_src = ("max_memory_allocated() is %s with caching off; requested_bytes.all.peak "
                       "of the unprofiled default-allocator run" % ar.get("max_memory_allocated"))
        by_src = (sm.get("peak") or {}).get("by_source") or {}
        if m == "async":
            torch_part = by_src.get("async_pool")
        elif m == "expandable":
            torch_part = by_src.get("vmm")
        else:
            torch_part = trace_peak - library_bytes if trace_peak is not None and library_bytes is not None else None
        outside = trace_peak - torch_part if trace_peak is not None and torch_part is not None else None
        r = rel(torch_part, ref)
        row = {
            "allocator_share": torch_part, "outside_allocator": outside, "peak_by_source": by_src,
            "mode": m, "setting": setting, "exit": rc, "trace_peak": trace_peak,
            "analyzer_peak": an_peak, "analyzer_peak_field": an_path, "reference": ref,
            "reference_source": ref_src, "rel_diff": r,
            "max_memory_allocated": ar.get("max_memory_allocated"),
            "max_memory_reserved": ar.get("max_memory_reserved"),
            "requested_bytes_peak": ar.get("requested_bytes_peak"),
            "allocator_backend": ar.get("allocator_backend"),
            "driver_used_end": (ar.get("mem_get_info") or {}).get("used"),
            "trace_bytes": file_size(os.path.join(work, "mode_%s.zst" % m)),
            "by_source": sm.get("by_source"),
            "dropped": (sm.get("stats") or {}).get("dropped_cupti", 0) + (sm.get("stats") or {}).get("dropped_writer", 0)
            if sm.get("stats") else None,
        }
        modes.append(row)
        rep.add("mode %s: exit status" % m, rc == 0, "exit %s" % rc)
        same = plain_out is not None and read_text(os.path.join(work, "mode_%s.stdout" % m)) == plain_out
        rep.add("mode %s: stdout unchanged" % m, same, "byte-identical to the unprofiled run" if same else "differs")
        rep.add("mode %s: peak vs %s" % (m, ref_name), r is not None and abs(r) <= TOL,
                "trace peak %s = allocator %s + libraries %s; allocator vs %s %s (%s)"
                % (mib(trace_peak), mib(torch_part), mib(outside), ref_name, mib(ref),
                   "n/a" if r is None else "%+.3f%%" % (100 * r)))
        if an is not None:
            rep.add("mode %s: gmem-analyze peak = check_trace peak" % m, an_peak == trace_peak,
                    "analyzer %s (field %s) vs check_trace %s" % (an_peak, an_path, trace_peak))
        if m in ("caching", "expandable"):
            bridge_checks(rep, m, an, ar, row)
    data["modes"] = modes

    # 3. naive vs sdpa
    att = {}
    for v in ("naive", "sdpa"):
        ar = j("%s.alloc.json" % v) or {}
        sm = j("%s.summary.json" % v) or {}
        an = j("%s.analyze.json" % v)
        att[v] = {
            "exit": read_rc(os.path.join(work, "%s.rc" % v)),
            "trace_peak": (sm.get("peak") or {}).get("device_bytes"),
            "analyzer_peak": find_peak(an)[0] if an is not None else None,
            "max_memory_allocated": ar.get("max_memory_allocated"),
            "max_memory_reserved": ar.get("max_memory_reserved"),
            "trace_bytes": file_size(os.path.join(work, "%s.zst" % v)),
            "records": sm.get("records"),
            "ranges": sm.get("ranges"),
            "kernels": sm.get("kernels"),
        }
        rep.add("%s trace recorded" % v, att[v]["exit"] == 0 and bool(att[v]["trace_bytes"]),
                "exit %s, %s bytes" % (att[v]["exit"], att[v]["trace_bytes"]))
        tb = att[v]["trace_bytes"]
        rep.add("%s trace <= 2 MiB" % v, tb is not None and tb <= 2 * 1024 * 1024, "%s bytes" % tb)
        rep.add("%s trace has NVTX ranges (emit_nvtx)" % v, (att[v]["ranges"] or 0) > 0,
                "%s RANGE_BEGIN records" % att[v]["ranges"])
        # the analyzer replays the trace in file order, check_trace by
        # address: they differ when a FREE reaches the trace before its ALLOC
        # (records of two threads out of order once gave a peak of 1.06 GiB for 675 MiB)
        rep.add("%s: gmem-analyze peak = check_trace peak" % v,
                att[v]["analyzer_peak"] is not None and att[v]["analyzer_peak"] == att[v]["trace_peak"],
                "analyzer %s vs check_trace %s" % (att[v]["analyzer_peak"], att[v]["trace_peak"]))
        # every memory record's NVTX range begins before it in the trace
        # (a writer that let an emit_nvtx burst overtake a RANGE_BEGIN
        # accounted sdpa's records to no range)
        unk = ((an or {}).get("summary") or {}).get("attribution", {}).get("unknown_ranges")
        att[v]["unknown_ranges"] = unk
        rep.add("%s: every memory event's NVTX range known to gmem-analyze" % v, unk == 0,
                "%s memory events naming a range not yet begun" % unk)
    n, s = att["naive"], att["sdpa"]
    d_tr = (n["trace_peak"] - s["trace_peak"]) if n["trace_peak"] is not None and s["trace_peak"] is not None else None
    d_pt = (n["max_memory_allocated"] - s["max_memory_allocated"]) \
        if n["max_memory_allocated"] is not None and s["max_memory_allocated"] is not None else None
    rd = rel(d_tr, d_pt)
    att["diff_trace_peak"] = d_tr
    att["diff_max_memory_allocated"] = d_pt
    att["rel_diff"] = rd
    rep.add("naive - sdpa peak vs max_memory_allocated difference", rd is not None and abs(rd) <= TOL,
            "trace %s vs PyTorch %s (%s)" % (mib(d_tr), mib(d_pt), "n/a" if rd is None else "%+.3f%%" % (100 * rd)))
    diff_txt = read_text(os.path.join(work, "diff.txt"), 6000)
    att["diff_head"] = diff_txt
    rep.add("gmem-analyze --diff ran", read_rc(os.path.join(work, "diff.rc")) == 0,
            "exit %s" % read_rc(os.path.join(work, "diff.rc")))
    data["attention"] = att

    # 4. emit_nvtx ranges vs torch.profiler
    data["ranges_vs_torch_profiler"] = compare_ranges(rep, j("cmp_gm.ranges.json"), j("cmp_tp_async.json"),
                                                      j("cmp_tp_caching.json"), j("cmp_gm.summary.json"))
    data["ops_vs_torch_profiler"] = compare_ranges(rep, j("cmp_ops.ranges.json"), None, j("cmp_tp_caching.json"),
                                                   j("cmp_ops.summary.json"), label="bridge op ranges", exact=True)

    # 5. exports and tables on the recorded traces
    for name in ("table", "by_range", "chrome", "timeline"):
        rc = read_rc(os.path.join(work, "naive.%s.rc" % name))
        if rc is not None:
            rep.add("gmem-analyze %s on naive.zst" % name, rc == 0, "exit %d" % rc)

    p, f = rep.counts()
    data["checks"] = [{"name": c[0], "result": {True: "PASS", False: "FAIL", None: "INFO"}[c[1]], "detail": c[2]}
                      for c in rep.checks]
    data["passed"], data["failed"] = p, f
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.json"), "w") as fh:
        json.dump(data, fh, indent=1, sort_keys=True, default=str)
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(markdown(data))
    return data


def compare_ranges(rep, gm, tp_async, tp_caching, gm_summary, label="emit_nvtx", exact=False):
    """Per op: gmemprof's self memory of the emit_nvtx range, or of the
    bridge's op range (active steps), against torch.profiler's self device
    memory (same schedule, separate run). exact: both in tensor blocks of the
    caching allocator, so within 512 B per call."""
    res = {"rows": [], "only_gmemprof": [], "only_torch": []}
    tp, which = None, None
    for cand, name in ((tp_async, "backend:cudaMallocAsync"), (tp_caching, "default caching allocator")):
        if cand and any(o.get("self_device_memory_usage") for o in cand.get("ops", {}).values()):
            tp, which = cand, name
            break
    res["torch_profiler_run"] = which
    if not gm or not tp:
        rep.add("%s ranges vs torch.profiler" % label, False,
                "missing input: gmemprof ranges %s, torch.profiler with memory %s" % (bool(gm), bool(tp)))
        return res
    g = gm.get("ranges", {})
    t = tp.get("ops", {})
    names = set(g) | set(t)
    ok_all = True
    big = 0
    for name in names:
        gv, tv = g.get(name), t.get(name)
        if gv is None or tv is None:
            lst = res["only_torch"] if gv is None else res["only_gmemprof"]
            val = (tv or {}).get("self_device_memory_usage") if gv is None else gv.get("self")
            if val:
                lst.append({"name": name, "self": val})
            continue
        ts = tv.get("self_device_memory_usage", 0)
        gs = gv.get("self", 0)
        calls = max(tv.get("count", 0), 1)
        # The torch.profiler run uses the caching allocator, which rounds each
        # block up to 512 B: up to 511 B per allocation, a few per call.
        tol = 512 * calls if exact else 0.02 * abs(ts) + 1024 * calls
        ok = abs(gs - ts) <= tol
        # record_function scopes (user annotations such as
        # "Optimizer.step#AdamW.step") get no self memory in torch.profiler;
        # gmemprof counts what is freed directly inside them.
        annotation = "::" not in name and ts == 0
        if annotation:
            res.setdefault("annotations", []).append({"name": name, "gmemprof_self": gs})
            continue
        row = {"name": name, "gmemprof_self": gs, "torch_self": ts, "gmemprof_calls": gv.get("count"),
               "torch_calls": tv.get("count"), "gmemprof_alloc": gv.get("alloc_bytes"),
               "gmemprof_free": gv.get("free_bytes"), "within_tolerance": ok}
        res["rows"].append(row)
        if max(abs(ts), abs(gs)) >= 1024 * 1024:
            big += 1
            ok_all = ok_all and ok
    res["rows"].sort(key=lambda r: -max(abs(r["torch_self"]), abs(r["gmemprof_self"])))
    res["only_gmemprof"].sort(key=lambda r: -abs(r["self"]))
    res["only_torch"].sort(key=lambda r: -abs(r["self"]))
    res["tp_total_positive"] = sum(max(o.get("self_device_memory_usage", 0), 0) for o in t.values())
    res["gm_total_positive"] = sum(max(o.get("self", 0), 0) for o in g.values())
    res["active_steps"] = ((gm_summary or {}).get("steps") or {}).get("active_steps")
    rep.add("%s self memory vs torch.profiler self_device_memory_usage" % label, big > 0 and ok_all,
            "%d ops >= 1 MiB compared (torch.profiler run: %s); tolerance %s" %
            (big, which, "512 B per call" if exact else "2% + 1 KiB per call"))
    return res


def fmt_pct(r):
    return "n/a" if r is None else "%+.3f%%" % (100 * r)


def markdown(d):
    L = []
    p, f = d["passed"], d["failed"]
    L.append("# gmemprof GPU report\n")
    L.append("**%s**: %d checks passed, %d failed.\n" % ("PASS" if f == 0 else "FAIL", p, f))
    if d.get("env"):
        L.append("## Machine\n\n```\n%s\n```\n" % d["env"].strip())
    L.append("## Checks\n\n| result | check | detail |\n|---|---|---|")
    for c in d["checks"]:
        L.append("| %s | %s | %s |" % (c["result"], c["name"], str(c["detail"]).replace("|", "/")))
    L.append("\n## Peak per allocator mode (train_gpt.py, whole run, no schedule)\n")
    L.append("Library bytes (cuBLAS workspaces, module statics; from the async run): %s\n"
             % mib(d.get("library_bytes")))
    L.append("| mode | trace peak | allocator share | libraries | gmem-analyze peak | PyTorch reference | difference | max_allocated | "
             "max_reserved | trace bytes |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for m in d.get("modes", []):
        L.append("| %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s |" % (
            m["mode"], mib(m["trace_peak"]), mib(m.get("allocator_share")), mib(m.get("outside_allocator")),
            mib(m["analyzer_peak"]), mib(m["reference"]),
            m["reference_source"], fmt_pct(m["rel_diff"]), mib(m["max_memory_allocated"]),
            mib(m["max_memory_reserved"]), m["trace_bytes"]))
    a = d.get("attention", {})
    if a:
        L.append("\n## Naive attention vs SDPA (backend:cudaMallocAsync, emit_nvtx)\n")
        L.append("| | trace peak | max_memory_allocated | max_memory_reserved | trace bytes | records |")
        L.append("|---|---|---|---|---|---|")
        for v in ("naive", "sdpa"):
            x = a.get(v, {})
            L.append("| %s | %s | %s | %s | %s | %s |" % (v, mib(x.get("trace_peak")), mib(x.get("max_memory_allocated")),
                                                     mib(x.get("max_memory_reserved")), x.get("trace_bytes"),
                                                     x.get("records")))
        L.append("| naive - sdpa | %s | %s | | | |" % (mib(a.get("diff_trace_peak")), mib(a.get("diff_max_memory_allocated"))))
        L.append("\nRelative difference of the differences: %s\n" % fmt_pct(a.get("rel_diff")))
        if a.get("diff_head"):
            L.append("`gmem-analyze naive.zst --diff sdpa.zst` (head):\n\n```\n%s\n```\n" % a["diff_head"][:4000])
    r = d.get("ranges_vs_torch_profiler", {})
    if r.get("rows"):
        L.append("\n## emit_nvtx range self memory vs torch.profiler (active steps 3-5)\n")
        L.append("torch.profiler run: %s. Totals of positive self memory: gmemprof %s, torch.profiler %s.\n" % (
            r.get("torch_profiler_run"), mib(r.get("gm_total_positive")), mib(r.get("tp_total_positive"))))
        L.append("| op | gmemprof self | torch.profiler self | calls (gm/torch) | ok |")
        L.append("|---|---|---|---|---|")
        for row in r["rows"][:25]:
            L.append("| %s | %d | %d | %s/%s | %s |" % (row["name"], row["gmemprof_self"], row["torch_self"],
                                                     row["gmemprof_calls"], row["torch_calls"],
                                                     "yes" if row["within_tolerance"] else "NO"))
        for key, title in (("only_gmemprof", "only in gmemprof"), ("only_torch", "only in torch.profiler")):
            if r.get(key):
                L.append("\n%s: %s" % (title, ", ".join("%s (%d)" % (x["name"], x["self"]) for x in r[key][:15])))
    if d.get("steps"):
        L.append("\n## Steps of run_all.sh\n\n| step | exit | seconds |\n|---|---|---|")
        for s in d["steps"]:
            L.append("| %s | %s | %s |" % (s["step"], s["rc"], s["seconds"]))
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    d = build(args.work, args.out)
    # compact summary for the terminal
    print("gpu report: %s, %d passed, %d failed" % ("PASS" if d["failed"] == 0 else "FAIL", d["passed"], d["failed"]))
    for c in d["checks"]:
        if c["result"] == "FAIL":
            print("  FAIL %s: %s" % (c["name"], c["detail"]))
    for m in d.get("modes", []):
        print("  peak %-10s trace %-14s ref %-14s %s" % (m["mode"], mib(m["trace_peak"]), mib(m["reference"]),
                                                       fmt_pct(m["rel_diff"])))
    a = d.get("attention", {})
    print("  naive-sdpa trace %s vs PyTorch %s (%s)" % (mib(a.get("diff_trace_peak")),
                                                      mib(a.get("diff_max_memory_allocated")), fmt_pct(a.get("rel_diff"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
