#!/usr/bin/env python3
"""CPU self-test of the GPU scripts' Python (no torch, no GPU): feeds
tests/gpu/gpu_report.py a synthetic run_all.sh work folder whose numbers are
worked out here, bench/summarize.py synthetic runs and
tests/gpu/torch_bridge_check.py synthetic analyzer output, and checks the
verdicts: consistent numbers must PASS, each planted discrepancy must FAIL.

    python3 tests/gpu/tools_selftest.py SCRATCH_DIR
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gpu_report  # noqa: E402
import summarize  # noqa: E402

MIB = 1024 * 1024
failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def wjson(path, obj):
    write(path, json.dumps(obj))


CTEST_LOG = """Test project /x/build-gpu
      Start 11: gpu.gpu.torch_sched
 1/13 Test #11: gpu.gpu.torch_sched ..................   Passed    9.12 sec
 2/13 Test #14: gpu.gpu.alloc_kinds ..................   Passed    1.10 sec
 3/13 Test #15: gpu.gpu.threads ......................***Failed    1.00 sec
 4/13 Test #16: gpu.gpu.steps_whole ..................***Skipped   0.03 sec

75% tests passed, 1 tests failed out of 4
"""


def make_work(work, broken=False):
    """A run_all.sh work folder. Peaks by hand: caching 700 MiB = reserved;
    async 410 MiB vs max_allocated 410 MiB + 1 MiB (0.24%); expandable 720 MiB =
    reserved; nocache 400 MiB vs requested peak of the plain run 400 MiB + 2 MiB
    (0.5%). naive 900 MiB, sdpa 500 MiB: difference 400 MiB vs PyTorch's
    890 - 492 = 398 MiB (0.5%)."""
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    write(os.path.join(work, "steps.tsv"), "build\t0\t61\nctest\t0\t40\n")
    write(os.path.join(work, "env.txt"), "NVIDIA H200, 580.00\n")
    write(os.path.join(work, "ctest.log"), CTEST_LOG.replace("***Failed", "   Passed").replace(
        "***Skipped", "   Passed") if not broken else CTEST_LOG)
    write(os.path.join(work, "selftest.rc"), "0\n")
    stdout = "train_gpt: ...\nstep 0\nstep 1\ndone\n"
    write(os.path.join(work, "plain.stdout"), stdout)
    write(os.path.join(work, "plain.rc"), "0\n")
    wjson(os.path.join(work, "plain.alloc.json"), {"requested_bytes_peak": 402 * MIB, "max_memory_allocated": 403 * MIB})
    modes = {
        "caching": (700 * MIB, {"max_memory_reserved": 700 * MIB, "max_memory_allocated": 410 * MIB}),
        "async": (410 * MIB, {"max_memory_allocated": 411 * MIB, "max_memory_reserved": 600 * MIB}),
        "expandable": (720 * MIB, {"max_memory_reserved": 720 * MIB, "max_memory_allocated": 410 * MIB}),
        "nocache": (400 * MIB, {"max_memory_allocated": 0, "max_memory_reserved": 0}),
    }
    lib = 128 * MIB  # libraries beside the allocator (cuBLAS workspaces): in every mode's peak
    src_of = {"caching": "malloc", "async": "async_pool", "expandable": "vmm", "nocache": "malloc"}
    for m, (share, alloc) in modes.items():
        if broken and m == "async":
            share = 450 * MIB  # 9.5% off: must fail
        peak = share + lib
        by_source = {src_of[m]: share + (lib if src_of[m] == "malloc" else 0)}
        if src_of[m] != "malloc":
            by_source["malloc"] = lib
        wjson(os.path.join(work, "mode_%s.summary.json" % m),
              {"peak": {"device_bytes": peak, "by_source": by_source}, "records": 1000})
        wjson(os.path.join(work, "mode_%s.alloc.json" % m), alloc)
        summ = {"peak_bytes": peak if not (broken and m == "caching") else peak + 1, "peak_step": 3}
        if m in ("caching", "expandable"):  # the bridge's numbers: torch.cuda's peaks
            summ["framework"] = [{"device": 0, "allocated_peak_bytes": alloc["max_memory_allocated"],
                                  "reserved_peak_bytes": alloc["max_memory_reserved"] + (broken and m == "expandable"),
                                  "cuda_peak_bytes": 10 * peak}]
        wjson(os.path.join(work, "mode_%s.analyze.json" % m), {"summary": summ, "rows": []})
        write(os.path.join(work, "mode_%s.rc" % m), "0\n")
        write(os.path.join(work, "mode_%s.stdout" % m), stdout if not (broken and m == "nocache") else stdout + "x\n")
        write(os.path.join(work, "mode_%s.zst" % m), "z" * 100)
    for v, peak, alloc in (("naive", 900, 890), ("sdpa", 500, 492)):
        wjson(os.path.join(work, "%s.summary.json" % v), {"peak": {"device_bytes": peak * MIB}, "records": 5000,
                                                          "ranges": 800, "kernels": 900})
        wjson(os.path.join(work, "%s.alloc.json" % v), {"max_memory_allocated": alloc * MIB})
        an_peak = peak * MIB if not (broken and v == "sdpa") else peak * MIB * 2
        unknown = 7 if broken and v == "naive" else 0
        wjson(os.path.join(work, "%s.analyze.json" % v), {"summary": {"peak_bytes": an_peak, "peak_step": 1,
                                                                      "attribution": {"unknown_ranges": unknown}},
                                                          "rows": []})
        write(os.path.join(work, "%s.rc" % v), "0\n")
        write(os.path.join(work, "%s.zst" % v), "z" * (3 * MIB if broken and v == "naive" else 1000))
    write(os.path.join(work, "diff.txt"), "naive vs sdpa\naten::softmax +192 MiB\n")
    write(os.path.join(work, "diff.rc"), "0\n")
    wjson(os.path.join(work, "cmp_gm.ranges.json"), {"scope": "active", "ranges": {
        "aten::mm": {"count": 30, "self": 100 * MIB, "alloc_bytes": 100 * MIB, "free_bytes": 0},
        "aten::_softmax": {"count": 12, "self": 96 * MIB, "alloc_bytes": 96 * MIB, "free_bytes": 0},
        "aten::add": {"count": 5, "self": 1000, "alloc_bytes": 1000, "free_bytes": 0},
        "(no range)": {"count": 0, "self": -5 * MIB}}})
    wjson(os.path.join(work, "cmp_tp_caching.json"), {"ops": {
        "aten::mm": {"count": 30, "self_device_memory_usage": 100 * MIB + 30 * 256},
        "aten::_softmax": {"count": 12, "self_device_memory_usage": (96 if not broken else 120) * MIB},
        "aten::add": {"count": 5, "self_device_memory_usage": 1024},
        "aten::empty": {"count": 3, "self_device_memory_usage": 2 * MIB}}})
    wjson(os.path.join(work, "cmp_tp_async.json"), {"ops": {"aten::mm": {"count": 30, "self_device_memory_usage": 0}}})
    wjson(os.path.join(work, "cmp_gm.summary.json"), {"steps": {"active_steps": 3}})
    # the bridge's op ranges, in tensor blocks as torch.profiler counts them:
    # within 512 B per call (aten::mm 30 calls, 30 x 256 B off)
    wjson(os.path.join(work, "cmp_ops.ranges.json"), {"scope": "active", "ranges": {
        "aten::mm": {"count": 30, "self": 100 * MIB, "alloc_bytes": 100 * MIB, "free_bytes": 0},
        "aten::_softmax": {"count": 12, "self": 96 * MIB, "alloc_bytes": 96 * MIB, "free_bytes": 0},
        "(no range)": {"count": 0, "self": -5 * MIB}}})
    wjson(os.path.join(work, "cmp_ops.summary.json"), {"steps": {"active_steps": 3}})
    write(os.path.join(work, "ops.diff.txt"),
          "range rows matched by normalized name, ranked by |B - A| of bytes held at the peak (top 3 of 9)\n"
          "range                         A           B        delta  ratio  calls A  calls B  only\n"
          "aten::_softmax       128.00 MiB           -  -128.00 MiB      -       12        -  A\n"
          "aten::empty_strided  121.00 MiB   65.00 MiB   -56.00 MiB  x0.54      492      492  -\n")
    for name in ("table", "by_range", "chrome", "timeline"):
        write(os.path.join(work, "naive.%s.rc" % name), "0\n")


def check_report(scratch):
    work, out = os.path.join(scratch, "work"), os.path.join(scratch, "out")
    make_work(work)
    d = gpu_report.build(work, out)
    fails = [c for c in d["checks"] if c["result"] == "FAIL"]
    expect(not fails, "consistent work folder: every check passes (%s)" % [c["name"] for c in fails])
    modes = {m["mode"]: m for m in d["modes"]}
    expect(abs(modes["async"]["rel_diff"] - (410.0 - 411.0) / 411.0) < 1e-12, "async relative difference")
    expect(modes["nocache"]["reference"] == 402 * MIB, "nocache falls back to the plain run's requested peak")
    expect(d["attention"]["diff_trace_peak"] == 400 * MIB and d["attention"]["diff_max_memory_allocated"] == 398 * MIB,
           "naive - sdpa differences")
    r = d["ranges_vs_torch_profiler"]
    expect(r["torch_profiler_run"] == "default caching allocator", "torch.profiler run without memory is skipped")
    expect([x["name"] for x in r["only_torch"]] == ["aten::empty"], "ops only torch.profiler saw")
    expect(os.path.exists(os.path.join(out, "report.md")) and os.path.exists(os.path.join(out, "report.json")),
           "report.md and report.json written")
    json.load(open(os.path.join(out, "report.json")))

    make_work(work, broken=True)
    d = gpu_report.build(work, out)
    failed = {c["name"] for c in d["checks"] if c["result"] == "FAIL"}
    for name in ("ctest -L gpu", "ctest gpu.gpu.threads", "ctest gpu.gpu.steps_whole",
                 "mode async: peak vs max_memory_allocated", "mode caching: gmem-analyze peak = check_trace peak",
                 "mode nocache: stdout unchanged", "naive trace <= 2 MiB",
                 "mode expandable: bridge reserved peak = max_memory_reserved()", "sdpa: gmem-analyze peak = check_trace peak",
                 "naive: every memory event's NVTX range known to gmem-analyze",
                 "emit_nvtx self memory vs torch.profiler self_device_memory_usage"):
        expect(name in failed, "planted defect reported: " + name)
    expect("naive - sdpa peak vs max_memory_allocated difference" not in failed, "no false alarm on the diff")

    # empty work folder: a FAIL report, not a crash
    empty = os.path.join(scratch, "empty")
    os.makedirs(empty, exist_ok=True)
    d = gpu_report.build(empty, os.path.join(scratch, "out-empty"))
    expect(d["failed"] > 0, "empty work folder gives FAIL, no crash")


def check_helpers():
    v, p = gpu_report.find_peak({"summary": {"devices": [{"peak_live_bytes": 5, "peak_step": 9},
                                                         {"peak_live_bytes": 7}]}, "peak_bytes_other": 100})
    expect((v, p) == (7, "summary.devices[1].peak_live_bytes"), "find_peak prefers the summary (%s %s)" % (v, p))
    expect(gpu_report.find_peak({"a": 1}) == (None, None), "find_peak without a peak")
    ct = gpu_report.parse_ctest(CTEST_LOG)
    expect(ct == {"gpu.gpu.torch_sched": "passed", "gpu.gpu.alloc_kinds": "passed", "gpu.gpu.threads": "failed",
                  "gpu.gpu.steps_whole": "skipped"}, "parse_ctest (%s)" % ct)


def check_summarize(scratch):
    runs = []
    for rnd in (1, 2, 3):
        for w, base in (("small", 10.0), ("medium", 50.0)):
            for c, f, mem in (("none", 1.0, 0), ("gmemprof-active", 1.01, 8 * MIB), ("gmemprof-wait", 1.0 + rnd * 0.002, 8 * MIB),
                              ("torch-profiler-full", 1.5, 300 * MIB)):
                r = {"workload": w, "config": c, "round": rnd, "median_ms": base * f, "steps": 30, "warmup": 10,
                     "driver_used_bytes": 1000 * MIB + mem, "rss_peak_kib_end": 1000, "rc": 0}
                if c == "gmemprof-active":
                    r.update({"trace_bytes": 30000, "events": 6000, "analysis_s": 0.05})
                runs.append(r)
    runs.append({"workload": "small", "config": "memory-history", "round": 1, "error": "no JSON line", "rc": 1})
    rows, targets = summarize.summarize(runs)
    by = {(r["workload"], r["config"]): r for r in rows}
    a = by[("small", "gmemprof-active")]
    expect(abs(a["ratio_median"] - 1.01) < 1e-9 and a["rounds"] == 3, "ratio median over rounds")
    expect(a["mem_added_bytes"] == 8 * MIB and a["bytes_per_step"] == 1000 and a["bytes_per_event"] == 5,
           "memory added, bytes per step and per event")
    w = by[("medium", "gmemprof-wait")]
    expect(abs(w["ratio_min"] - 1.002) < 1e-9 and abs(w["ratio_max"] - 1.006) < 1e-9 and
           abs(w["ratio_median"] - 1.004) < 1e-9, "ratio spread")
    expect(by[("small", "memory-history")]["errors"], "a failed run is reported")
    t = {x["target"]: x["result"] for x in targets}
    expect(t["active-window step ratio <= 1.02 (small)"] == "PASS", "target small active")
    expect(t["outside-window step ratio <= 1.005 (small)"] == "PASS", "target small wait (1.004)")
    expect(t["active-window step ratio <= 1.01 (medium)"] == "PASS", "target medium active at the limit")
    md = summarize.markdown(rows, targets, {"date": "d"})
    expect("| small | gmemprof-active | 3 |" in md, "markdown table row")
    # merge: a run that printed nothing still gives a line
    lf = os.path.join(scratch, "line.txt")
    write(lf, "garbage\n")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "summarize.py"), "merge", "--line-file", lf,
                        "--config", "none", "--round", "1", "--workload", "small", "--rc", "1"],
                       capture_output=True, text=True)
    rec = json.loads(p.stdout)
    expect(rec.get("error") and rec["rc"] == 1, "merge of a failed run")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "workload.py"), "--size", "small", "--mode",
                        "torch-profiler-full", "--fake", "--analyze"], capture_output=True, text=True)
    rec = json.loads(p.stdout.strip().splitlines()[-1])
    expect(rec["steps"] == 30 and len(rec["step_ms"]) == 30 and rec["p10_ms"] <= rec["median_ms"] <= rec["p90_ms"],
           "workload.py --fake prints one JSON line with 30 steps")



def check_bridge(scratch):
    """torch_bridge_check.py: equal numbers pass; one byte off anywhere fails."""
    d = os.path.join(scratch, "bridge")
    os.makedirs(d, exist_ok=True)
    summ = os.path.join(d, "summary.csv")
    write(summ, "# gmem-analyze 0.1.0 trace=t.zst\n"
                "# window.0: first_step=3 last_step=5 begin_ns=1 end_ns=2 baseline_bytes=5000 baseline_count=2\n"
                "# framework.dev0: layer=blocks allocated_peak_bytes=7000 allocated_peak_time_ns=5 "
                "reserved_peak_bytes=20000 at_peak_reserved_bytes=20000\nname,calls\nk,1\n")
    tags = os.path.join(d, "tags.csv")
    write(tags, "# table: by=tag\nname,device,step,time_ns,allocated_bytes,reserved_bytes,outside_allocator_bytes\n"
                "before_model,0,0,1,0,0,0\nafter_model,0,0,2,4000,20000,0\nafter_model,1,0,2,9,9,0\n")
    dump = os.path.join(d, "dump.txt")
    write(dump, 'string       id=1 "before_capture"\nstring       id=2 "after_capture"\n'
                'tag          ts=1 name=1 step=0 ndev=1\n'
                'block        ts=2 action=alloc dev=0 addr=0x1 bytes=512 pool=3 requested=500\n'
                'block        ts=3 action=segment_alloc dev=0 addr=0x1 bytes=2097152 pool=3 requested=0\n'
                'tag          ts=4 name=2 step=0 ndev=1\n')
    tool = os.path.join(HERE, "torch_bridge_check.py")

    def run(counters, *extra):
        cj = os.path.join(d, "counters.json")
        wjson(cj, counters)
        return subprocess.run([sys.executable, tool, cj, summ, tags] + list(extra), capture_output=True, text=True)

    good = {"device": 0, "tags": [["before_model", 0, 0], ["after_model", 4000, 20000]],
            "step_marks": [100, 200, 5000, 6000], "peak_allocated": 7000, "peak_reserved": 20000}
    expect(run(good).returncode == 0, "bridge check: equal numbers pass")
    expect(run(good, "--sched").returncode == 0, "bridge check: the baseline is the third mark's 5000")
    outcome = os.path.join(d, "outcome.txt")
    p = run(good, "--dump", dump, "--outcome", outcome)
    expect(p.returncode == 0 and "capture: alloc/private pool 1, segment_alloc/private pool 1; 5 replays: none"
           in open(outcome).read(), "bridge check: the graph's records by phase (%s)" % p.stdout[-200:])
    for what, bad in (("allocated peak", dict(good, peak_allocated=7001)),
                      ("reserved peak", dict(good, peak_reserved=19999)),
                      ("a tag's allocated", dict(good, tags=[["before_model", 0, 0], ["after_model", 4001, 20000]])),
                      ("a missing tag", dict(good, tags=good["tags"] + [["end", 0, 0]]))):
        expect(run(bad).returncode == 1, "bridge check: %s one off fails" % what)
    expect(run(dict(good, step_marks=[100, 200, 5001]), "--sched").returncode == 1, "bridge check: baseline off fails")

def main():
    scratch = sys.argv[1] if len(sys.argv) > 1 else "tools_selftest"
    os.makedirs(scratch, exist_ok=True)
    check_helpers()
    check_report(scratch)
    check_summarize(scratch)
    check_bridge(scratch)
    if failures:
        print("tools_selftest: FAIL, %d problems" % len(failures))
        return 1
    print("tools_selftest: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
