#!/usr/bin/env python3
"""run_timeline_browser.py ANALYZE SYNTH TRACE WORKDIR [ALLOCS] [--bridge MKTRACE_BRIDGE] [--exact MKTL_EXACT]
                          [--train TRAIN_GMT --modules MODULES_GMT] [--cats MKTL_CATS]

Opens the --timeline page of TRACE (a recorded sample) and of the other
samples beside it (sdpa.zst; ranks/rank*.zst, one lane per rank), of a gmem-synth
trace of about ALLOCS allocations (default 1e6) and, with --bridge, of the
PyTorch-bridge trace that MKTRACE_BRIDGE writes (tests/analyzer/tl_bridge.c),
alone and beside a copy 5 s later (two ranks: the second lane's times are
shifted), in headless Chromium
(--dump-dom of page.html#selftest: the page's hook writes its results into
<pre id="gmem-test">) and checks:
  - no JavaScript error (the page's error handler, and Chromium's console log);
  - the page's band counts equal the ones gmem-analyze printed for the file;
  - the legend's bytes at the peak, as the page sums them from its bands, equal
    the analyzer's (embedded) and the report's live-at-peak by kernel
    (gmem-analyze --format json), and all owners together equal the peak; a
    bridge trace's page colours by category, its legend's bytes those of
    gmem-analyze --by category;
  - a wheel zoom driven by the hook narrows the view; a hover over the largest
    band at the peak shows that band's tooltip text;
  - the 1e6 page is at most 10 MB;
  - the bridge trace's layers: the reserved segments and the allocations
    outside PyTorch's allocator that the page draws are as many as
    gmem-analyze printed; their bytes at the peak, as the page sums them,
    equal the analyzer's (embedded) and the report's (JSON "framework"),
    and the numbers worked out in tl_bridge.c; hovers on a tensor, a
    segment and an allocation outside the allocator show their layer and size.
With --exact, the traces MKTL_EXACT writes (tests/analyzer/mktl_exact.c),
whose live total is known at every instant: at 1,000 random columns of
each of three views (the whole run, a thirtieth, a thousandth), the total
the page draws (read from its model through window.__gmem.columns) equals
the known total at the column's moment; where more distinct times than the
page's summary holds share a bucket, a column may instead give a range,
which must hold the known total, and the whole run's columns are exact.
The --diff page of TRACE and sdpa.zst names both files, and every colour is
one owner in both lanes (for each owner key, "colour by").
With --train and --modules, the scenario traces of scenarios.c (sc_train)
and sc_modules.c: the train page opens coloured by category, its column at
the peak stacks the categories bottom up in their order with the bytes
worked out in scenarios.c; "colour by" switches to module, op, line and
kernel (owners GPT, aten::mm, ...), no longer stacked by category; the hover
names category, module, op and line; and on the --diff page of the two,
which opens coloured by category, each colour is one owner in both lanes
for every key. With --cats, the trace MKTL_CATS writes (mktl_cats.c: more
blocks than the page draws, the bytes of each category known at every
event): at 300 random columns of three views, wherever the column's total
is exact, each category's height (its bands plus its share of the merged
layer) equals its live bytes.
Prints the page size and the time from navigation to first paint.
Exit 77 (CTest: skipped) when Chromium is not installed.
"""
import bisect
import glob
import html
import json
import os
import re
import shutil
import subprocess
import tempfile
import sys
import time

CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0",
               "--window-size=1300,900", "--virtual-time-budget=20000"]


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def chromium():
    for c in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if c and shutil.which(c):
            return shutil.which(c)
    return None


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail("%s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-2000:]))
    return p


def run_chrome(chrome, work, args, timeout=300):
    """Chromium with a profile of its own: a second run, or one left over
    from a killed test, never shares it."""
    prof = tempfile.mkdtemp(prefix="chrome-profile-", dir=work)
    try:
        return subprocess.run([chrome] + CHROME_ARGS + ["--user-data-dir=" + prof] + args,
                              capture_output=True, text=True, timeout=timeout)
    finally:
        shutil.rmtree(prof, ignore_errors=True)


def open_page(chrome, page, work):
    t = time.time()
    p = run_chrome(chrome, work, ["--dump-dom", "file://" + os.path.abspath(page) + "#selftest"])
    wall = time.time() - t
    m = re.search(r'<pre id="gmem-test"[^>]*>(.*?)</pre>', p.stdout, re.S)
    if not m or not m.group(1).strip():
        fail("%s: the page wrote no test results (chromium rc %d): %s" % (page, p.returncode, p.stderr[-2000:]))
    # Chromium's log carries console messages: an uncaught error is one
    console = [l for l in p.stderr.splitlines() if "CONSOLE" in l and ("Uncaught" in l or "Error" in l)]
    return json.loads(html.unescape(m.group(1))), console, wall


# Drives the page's read-only hook from a script appended to a copy of it.
DRIVER = r"""<script>
(function () {
  var g = window.__gmem, out = {}, seed = 12345;
  function rnd() { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; }
  try {
    var mode = @MODE@;
    if (mode === 'exact') {
      var full = g.axis().full, span = full[1] - full[0], mid = full[0] + 0.37 * span;
      out.levels = [[full[0], full[1]], [mid - span / 60, mid + span / 60], [mid - span / 2000, mid + span / 2000]].map(function (v) {
        g.setView(v[0], v[1]);
        var c = g.columns(0), n = c.t.length, pick = [], seen = {};
        while (pick.length < Math.min(1000, n)) { var k = Math.floor(rnd() * n); if (!seen[k]) { seen[k] = 1; pick.push(k); } }
        return { view: v, ncols: n, cols: pick.map(function (k) { return [k, c.t[k], c.lo[k], c.hi[k], c.bands[k]]; }) };
      });
    } else if (mode === 'diff') {
      out.diff = g.diff();
      out.keys = g.keys();
      out.first = g.key();
      out.owners = out.keys.map(function (k, i) { g.setKey(i); return g.owners(); });
    }
    if (mode === 'split') {
      var full2 = g.axis().full, span2 = full2[1] - full2[0], mid2 = full2[0] + 0.3 * span2;
      out.levels = [[full2[0], full2[1]], [mid2 - span2 / 60, mid2 + span2 / 60], [mid2 - span2 / 2000, mid2 + span2 / 2000]].map(function (v) {
        g.setView(v[0], v[1]);
        var n = g.columns(0).t.length, pick = [], seen = {};
        while (pick.length < Math.min(300, n)) { var k = Math.floor(rnd() * n); if (!seen[k]) { seen[k] = 1; pick.push(k); } }
        return pick.map(function (k) { return g.stackAt(0, 0, k); });
      });
    }
    if (mode === 'cats') {
      var peak = g.lanes[0].peak_t;
      g.setKey(0);
      out.first = g.key();
      out.keys = g.keys();
      out.stack = g.stackAt(0, peak);
      out.tip = g.selftest().tip;
      out.switched = out.keys.map(function (k, i) {
        g.setKey(i);
        return { key: g.key(), owners: g.owners()[0].owners, stack: g.stackAt(0, peak) };
      });
    }
  } catch (e) { out.error = String(e) + ' ' + (e.stack || ''); }
  out.errors = g.errors;
  document.getElementById('gmem-test').textContent = JSON.stringify(out);
})();
</script>
"""


def drive(chrome, page, work, mode):
    """The page with the driver appended, opened; its results."""
    src = open(page, encoding="utf-8").read()
    i = src.rindex("</body>")
    driven = page[:-5] + "_driven.html"
    with open(driven, "w", encoding="utf-8") as f:
        f.write(src[:i] + DRIVER.replace("@MODE@", json.dumps(mode)) + src[i:])
    p = run_chrome(chrome, work, ["--dump-dom", "file://" + os.path.abspath(driven)])
    m = re.search(r'<pre id="gmem-test"[^>]*>(.*?)</pre>', p.stdout, re.S)
    if not m or not m.group(1).strip():
        fail("%s: the driver wrote no results (chromium rc %d): %s" % (driven, p.returncode, p.stderr[-2000:]))
    res = json.loads(html.unescape(m.group(1)))
    if res.get("error") or res.get("errors"):
        fail("%s: JavaScript errors: %s %s" % (driven, res.get("error"), res.get("errors")))
    return res


def check_exact(analyze, chrome, gen, work, name, n, ticks, all_exact):
    """A trace of known live total: the page's drawn total at random columns."""
    trace, truth = os.path.join(work, name + ".gmt"), os.path.join(work, name + ".truth")
    run([gen, trace, truth, str(n), str(ticks)])
    tt, tv = [], []
    for line in open(truth):
        a, b = line.split()
        tt.append(int(a))
        tv.append(int(b))

    def known(t):
        k = bisect.bisect_right(tt, t) - 1
        return tv[k] if k >= 0 else 0

    page = os.path.join(work, name + ".html")
    run([analyze, trace, "--timeline", page])
    res = drive(chrome, page, work, "exact")
    report = []
    for lv, level in enumerate(res["levels"]):
        exact = ranged = 0
        for k, t, lo, hi, bands in level["cols"]:
            want = known(t)
            if lo == hi:
                if lo != want:
                    fail("%s: view %d column %d at %s ns: the page draws %d bytes, the trace has %d live" %
                         (name, lv, k, t, lo, want))
                exact += 1
            else:
                if not lo <= want <= hi:
                    fail("%s: view %d column %d at %s ns: the page's range %d..%d misses the %d bytes live" %
                         (name, lv, k, t, lo, hi, want))
                ranged += 1
            if bands > want:
                fail("%s: view %d column %d: the bands drawn hold %d bytes, more than the %d live" % (name, lv, k, bands, want))
        if (all_exact or lv == 0) and ranged:
            fail("%s: view %d: %d of %d columns give a range, not the exact total" % (name, lv, ranged, exact + ranged))
        report.append("%d exact + %d ranges" % (exact, ranged))
    print("%s: %d allocations, %d distinct times; drawn totals at 1,000 random columns of 3 views: %s; page %.2f MB" %
          (name, n, len(tt), ", ".join(report), os.path.getsize(page) / 1e6))


def check_diff(analyze, chrome, a, b, work, name="diff"):
    """The --diff page: both files named, one colour per owner over the lanes."""
    page = os.path.join(work, name + ".html")
    run([analyze, a, "--diff", b, "--timeline", page])
    res = drive(chrome, page, work, "diff")
    d = res["diff"]
    if not d or d["files"] != [a, b] or a not in d["title"] or b not in d["title"]:
        fail("diff: the page names %s, not %s and %s" % (d, a, b))
    ba, bb = os.path.basename(a), os.path.basename(b)
    if not any(bb in t and t.startswith("B") for t in d["lanes"]) or not any(ba in t and t.startswith("A") for t in d["lanes"]):
        fail("diff: lane titles %s do not name %s and %s" % (d["lanes"], ba, bb))
    if not d["d"] or not any(d["d"]):
        fail("diff: B - A is empty: %s" % d["d"][:10])
    for key, lanes in zip(res["keys"], res["owners"]):
        owner_of, shared = {}, 0
        names = [set(o for o, c in l["owners"]) for l in lanes]
        ncol = max((c for l in lanes for o, c in l["owners"]), default=0)  # the grey of the rest is the highest
        for l in lanes:
            for o, c in l["owners"]:
                if c == ncol:
                    continue
                if owner_of.setdefault(c, o) != o:
                    fail("diff: colour %d is %r in one lane and %r in another (colour by %s)" % (c, owner_of[c], o, key))
        shared = len(set.intersection(*names)) if names else 0
        if not shared:
            fail("diff: no owner (%s) in both lanes: the test shows nothing" % key)
        print("diff: colour by %s: %d colours, each one owner in %d lanes (%d owners in both)" %
              (key, len(owner_of), len(lanes), shared))
    print("diff: %s; %s" % (d["title"], d["heading"]))
    return res["first"]


def check(analyze, chrome, trace, work, name, bridge=False):
    """One trace's page; trace may be a list: several ranks, a lane each."""
    traces = trace if isinstance(trace, list) else [trace]
    page = os.path.join(work, name + ".html")
    line = run([analyze] + traces + ["--timeline", page]).stdout.strip()
    # a bridge trace alone colours by category; several ranks (no categories) by kernel
    by = "category" if bridge and len(traces) == 1 else "kernel"
    m = re.fullmatch(r"gmem-analyze: wrote (.*) \(memory timeline: (\d+) lanes?, (\d+) bands drawn, (\d+) small "
                     r"allocations merged(?:, (\d+) reserved segments, (\d+) allocations outside PyTorch's allocator)?, "
                     r"colours by " + by + r"\)", line)
    if not m or m.group(1) != page:
        fail("%s: gmem-analyze printed %r, not one line for the file" % (name, line))
    if bool(m.group(5)) != bridge:
        fail("%s: gmem-analyze printed %r: the bridge's layers %s" % (name, line, "missing" if bridge else "without the bridge"))
    drawn, merged = int(m.group(3)), int(m.group(4))
    # each trace's own report: a lane per trace (one device each here)
    reps = [json.loads(run([analyze, t, "--format", "json", "--top", "0"]).stdout) for t in traces]
    rep = reps[0]
    res, console, wall = open_page(chrome, page, work)
    if res["errors"] or console:
        fail("%s: JavaScript errors: %s %s" % (name, res["errors"], console))
    lanes = res["lanes"]
    if len(lanes) != int(m.group(2)) or len(lanes) != len(traces):
        fail("%s: page has %d lanes; gmem-analyze said %s, for %d traces" % (name, len(lanes), m.group(2), len(traces)))
    if (sum(l["bands"] for l in lanes), sum(l["merged"] for l in lanes)) != (drawn, merged):
        fail("%s: page draws %s bands and merged %s; gmem-analyze said %d and %d" %
             (name, [l["bands"] for l in lanes], [l["merged"] for l in lanes], drawn, merged))
    for lane, r in zip(lanes, reps):
        if lane["bands"] + lane["merged"] != lane["all"]:
            fail("%s: %d drawn + %d merged != %d allocations" % (name, lane["bands"], lane["merged"], lane["all"]))
        pk = r["live_at_peak"][0]
        if lane["peak"] != pk["peak_bytes"] or lane["peak_sum"] != pk["bytes"]:
            fail("%s %s: page peak %s, bands live at it %s; report %d and %d" %
                 (name, lane["title"], lane["peak"], lane["peak_sum"], pk["peak_bytes"], pk["bytes"]))
    lane, pk = lanes[0], rep["live_at_peak"][0]
    legend = res["legend"]
    if not legend:
        fail(name + ": empty legend")
    for e in legend:
        if e["bytes"] != e["page_bytes"]:
            fail("%s: legend %r: analyzer %d bytes at the peak, page %d" % (name, e["name"], e["bytes"], e["page_bytes"]))
    if by == "category":
        cats = json.loads(run([analyze, traces[0], "--by", "category", "--format", "json"]).stdout)["rows"]
        want = {r["category"]: r["peak_bytes"] for r in cats if r["device"] == 0}
        got = {e["name"]: e["bytes"] for e in legend}
        if any(want.get(k) != v for k, v in got.items()) or sum(got.values()) != lane["peak"]:
            fail("%s: legend by category %s; gmem-analyze --by category %s, peak %s" % (name, got, want, lane["peak"]))
    else:
        groups = [g["bytes"] for g in pk["by_kernel"]]
        if pk.get("baseline_bytes") and not any(g["name"] == "(baseline)" for g in pk["by_kernel"]):
            groups.append(pk["baseline_bytes"])
        want = sorted(groups, reverse=True)[:len(legend)]
        got = sorted((e["bytes"] for e in legend), reverse=True)
        # several lanes: the colours go to the owners ranked over all lanes, not the first lane's top
        if len(lanes) == 1 and got != want:
            fail("%s: legend bytes %s; the report's live at the peak by kernel %s" % (name, got, want))
    st = res.get("selftest") or {}
    if not st.get("zoomed"):
        fail("%s: the driven wheel zoom did not narrow the view: %s" % (name, st))
    tip = st.get("tip", "")
    # a bridge trace's hover names the category (where known), module, op, line and kernel
    named = "\ncategory: " if by == "category" else "\nkernel: " if bridge else "owner (kernel): "
    if not tip or tip != st.get("expect") or not tip.startswith("size ") or named not in tip:
        fail("%s: hover tooltip %r, expected %r" % (name, tip, st.get("expect")))
    layers = res.get("layers") or [None]
    if bridge:
        if len(layers) != len(lanes) or None in layers:
            fail("%s: layers %s for %d lanes" % (name, layers, len(lanes)))
        if (sum(l["segments"] for l in layers), sum(l["outside_n"] for l in layers)) != (int(m.group(5)), int(m.group(6))):
            fail("%s: page draws %s segments and %s outside; gmem-analyze said %s and %s" %
                 (name, [l["segments"] for l in layers], [l["outside_n"] for l in layers], m.group(5), m.group(6)))
        for ly, r in zip(layers, reps):
            check_layers(name, ly, r)
        check_layer_hovers(name, st)
    elif layers[0] is not None or "seg_tip" in st:
        fail("%s: layers drawn for a trace without the bridge: %s" % (name, layers))
    size = os.path.getsize(page)
    print("%s: %d lane%s, %d allocations, %d bands drawn, %d merged; page %.2f MB; first paint %.0f ms after navigation "
          "(chromium --dump-dom %.1f s); legend top %s %d bytes; tooltip: %s" %
          (name, len(lanes), "" if len(lanes) == 1 else "s", sum(l["all"] for l in lanes), drawn, merged, size / 1e6,
           res["first_paint_ms"], wall, legend[0]["name"], legend[0]["bytes"], tip.splitlines()[0]))
    return lane, size


MIB = 1 << 20

# sc_train (scenarios.c): bytes of each category at the peak (t50), in the order they stack
TRAIN_PEAK = [("parameter", 8), ("gradient", 8), ("optimizer state", 16), ("activation", 4), ("input", 1),
              ("workspace", 2), ("other", 2)]


def check_split(analyze, chrome, gen, work):
    """Merged small blocks split by category: at random columns of three views
    each category's height (its bands and its merged share) is its live bytes."""
    trace, truth = os.path.join(work, "cats.gmt"), os.path.join(work, "cats.truth")
    run([gen, trace, truth])
    tt, tv = [], []
    for line in open(truth):
        f = [int(x) for x in line.split()]
        tt.append(f[0])
        tv.append({"parameter": f[1], "activation": f[2], "temporary": f[3]})
    page = os.path.join(work, "cats.html")
    out = run([analyze, trace, "--timeline", page]).stdout
    if "colours by category" not in out or " 0 small allocations merged" in out:
        fail("cats: %r: not coloured by category with merged blocks" % out)
    res = drive(chrome, page, work, "split")
    report = []
    for lv, cols in enumerate(res["levels"]):
        exact = shares = 0
        for c in cols:
            if not c["exact"]:
                continue
            k = bisect.bisect_right(tt, c["t"]) - 1
            want = {n: b for n, b in (tv[k] if k >= 0 else {}).items() if b}
            got = {}
            for name, b, merged in c["parts"]:
                got[name] = got.get(name, 0) + b
                shares += merged
            if got != want or c["total"] != sum(want.values()):
                fail("cats: view %d: the column at %s ns stacks %s (total %s); the trace has %s live" %
                     (lv, c["t"], got, c["total"], want))
            exact += 1
        if not exact:
            fail("cats: view %d: no column with an exact total" % lv)
        report.append("%d exact columns, %d merged shares" % (exact, shares))
        if lv == 0 and not shares:
            fail("cats: the whole run's columns draw no merged share by category")
    print("cats: each category's height equals its live bytes: %s" % "; ".join(report))


def check_categories(analyze, chrome, train, modules, work):
    """A bridge trace opens coloured by category, stacked; the switch to module, op, line, kernel."""
    page = os.path.join(work, "train.html")
    run([analyze, train, "--timeline", page])
    res = drive(chrome, page, work, "cats")
    if res["first"] != {"name": "category", "stacked": True, "by": "category"}:
        fail("train: the page opens coloured by %s, not by category (stacked)" % res["first"])
    for k in ("module", "op", "line", "kernel"):
        if k not in res["keys"]:
            fail("train: no 'colour by %s' among %s" % (k, res["keys"]))
    st = res["stack"]
    got = [(n, b // MIB) for n, b, merged in st["parts"]]
    # bottom up: the categories in their order, each category's blocks together
    merged = []
    for n, b in got:
        if not merged or merged[-1][0] != n:
            merged.append([n, 0])
        merged[-1][1] += b
    if [tuple(x) for x in merged] != TRAIN_PEAK or not st["exact"] or st["total"] != 41 * MIB:
        fail("train: the column at the peak stacks %s (total %s, exact %s); scenarios.c: %s, 41 MiB" %
             (merged, st["total"], st["exact"], TRAIN_PEAK))
    tip = res["tip"]
    for k in ("category: ", "module: ", "op: ", "line: "):
        if "\n" + k not in tip:
            fail("train: the hover %r does not name the %s" % (tip, k.strip(": ")))
    want = {"module": "GPT", "op": "aten::mm", "kernel": "(unattributed)", "category": "activation"}
    for sw in res["switched"]:
        key = sw["key"]
        if key["stacked"] != (key["name"] == "category" and res["keys"].index(key["name"]) == 0):
            fail("train: colour by %s: stacked %s" % (key["name"], key["stacked"]))
        names = [o for o, c in sw["owners"]]
        if key["name"] in want and want[key["name"]] not in names:
            fail("train: colour by %s: owners %s lack %r" % (key["name"], names, want[key["name"]]))
        if sum(b for n, b, m in sw["stack"]["parts"]) != 41 * MIB:
            fail("train: colour by %s: the column at the peak holds %s" % (key["name"], sw["stack"]))
    print("train: opens coloured by category; at the peak bottom up %s; switches: %s; hover: %s" %
          (", ".join("%s %d MiB" % (n, b) for n, b in merged), ", ".join(s["key"]["name"] for s in res["switched"]),
           " / ".join(tip.splitlines()[1:5])))
    # the --diff page of the two bridge traces: opens by category; one colour, one owner, for every key
    first = check_diff(analyze, chrome, train, modules, work, "diff_cats")
    if first["name"] != "category":
        fail("diff of bridge traces: opens coloured by %s, not by category" % first)
    return os.path.getsize(page)


def check_layers(name, ly, rep):
    """A lane of the bridge trace (tl_bridge.c): reserved segments, outside."""
    if (ly["segments"], ly["outside_n"]) != (2, 2):
        fail("%s %s: page draws %d segments and %d outside; tl_bridge.c 2 and 2" %
             (name, ly["title"], ly["segments"], ly["outside_n"]))
    fw = rep["summary"]["framework"][0]
    for key, page_keys, want, rkey in (("reserved", ("reserved", "reserved_page", "reserved_model"), 40 * MIB,
                                        "at_peak_reserved_bytes"),
                                       ("outside", ("outside", "outside_page", "outside_model"), 8 * MIB,
                                        "at_peak_outside_allocator_bytes")):
        got = [ly[k] for k in page_keys] + [fw[rkey]]
        if got != [want] * 4:
            fail("%s %s: %s at the peak: analyzer, page, model, report %s; tl_bridge.c %d" %
                 (name, ly["title"], key, got, want))
    if ly["segments_at_peak"] != 2:
        fail("%s %s: %d segments live at the peak, tl_bridge.c 2" % (name, ly["title"], ly["segments_at_peak"]))
    print("%s %s: layers at the peak: reserved %d bytes in %d segments, outside %d bytes" %
          (name, ly["title"], ly["reserved"], ly["segments_at_peak"], ly["outside"]))


def check_layer_hovers(name, st):
    """The first lane's hovers on a tensor, a segment and memory outside the allocator."""
    tip = st.get("tip", "")
    if not tip.startswith("size 12.00 MiB at 0x7f0002000000\n") or \
            "layer: tensors (blocks of PyTorch's caching allocator)" not in tip:
        fail("%s: tensor hover %r: the 12 MiB softmax tensor in segment 2" % (name, tip))
    seg = st.get("seg_tip", "")
    if seg != st.get("seg_expect") or not seg.startswith(
            "reserved segment: size 20.00 MiB at 0x7f0002000000\nlayer: reserved segments (PyTorch's caching allocator)\n"
            "allocated 18.000 ms, freed 24.000 ms, lifetime 6.00 ms\n"
            "at 19.000 ms: 40.00 MiB reserved in 2 segments, 26.00 MiB in tensors, 14.00 MiB in no tensor"):
        fail("%s: segment hover %r, expected %r" % (name, seg, st.get("seg_expect")))
    out = st.get("out_tip", "")
    if out != st.get("out_expect") or not out.startswith(
            "outside PyTorch's allocator: size 8.00 MiB at 0x7e0000000000\nlayer: outside PyTorch's allocator") or \
            "allocated with cudaMalloc at 11.000 ms, never freed" not in out:
        fail("%s: outside hover %r, expected %r" % (name, out, st.get("out_expect")))
    print("%s: segment hover: %s" % (name, seg.splitlines()[0]))


def main():
    args = sys.argv[1:]
    bridge = exact = None
    if "--exact" in args:
        i = args.index("--exact")
        if i + 1 >= len(args):
            fail(__doc__)
        exact = args[i + 1]
        del args[i:i + 2]
    train = modules = cats = None
    for opt in ("--train", "--modules", "--cats"):
        if opt in args:
            i = args.index(opt)
            if i + 1 >= len(args):
                fail(__doc__)
            if opt == "--train":
                train = args[i + 1]
            elif opt == "--cats":
                cats = args[i + 1]
            else:
                modules = args[i + 1]
            del args[i:i + 2]
    if "--bridge" in args:
        i = args.index("--bridge")
        if i + 1 >= len(args):
            fail(__doc__)
        bridge = args[i + 1]
        del args[i:i + 2]
    if len(args) < 4:
        fail(__doc__)
    analyze, synth, trace, work = args[0:4]
    allocs = int(float(args[4])) if len(args) > 4 else 1000000
    chrome = chromium()
    if not chrome:
        print("SKIP: chromium not found: install Debian's chromium package (scripts/setup-deps.sh does) "
              "or set CHROMIUM to the browser", file=sys.stderr)
        sys.exit(77)
    os.makedirs(work, exist_ok=True)
    if exact:
        # distinct times within the summary's bound: exact at every column; past it, ranges when zoomed in
        check_exact(analyze, chrome, exact, work, "exact", 150000, 60000, True)
        check_exact(analyze, chrome, exact, work, "exact_spread", 150000, 400000, False)
    check(analyze, chrome, trace, work, "sample")
    # the other samples beside TRACE: sdpa.zst, and ranks/ (one lane per rank)
    sd = os.path.dirname(os.path.abspath(trace))
    if os.path.exists(os.path.join(sd, "sdpa.zst")):
        check(analyze, chrome, os.path.join(sd, "sdpa.zst"), work, "sdpa")
    if os.path.exists(os.path.join(sd, "sdpa.zst")):
        check_diff(analyze, chrome, os.path.abspath(trace), os.path.join(sd, "sdpa.zst"), work)
    ranks = sorted(glob.glob(os.path.join(sd, "ranks", "rank*.zst")))
    if ranks:
        check(analyze, chrome, ranks, work, "ranks")
    if bridge:
        bt, late = os.path.join(work, "bridge.gmt"), os.path.join(work, "bridge_late.gmt")
        run([bridge, bt])
        check(analyze, chrome, bt, work, "bridge", bridge=True)
        # two ranks, the second started 5 s later: its lane's times are shifted on the common axis
        run([bridge, late, "5000"])
        check(analyze, chrome, [bt, late], work, "bridge_ranks", bridge=True)
    if train and modules:
        size = check_categories(analyze, chrome, train, modules, work)
        print("train: page %d bytes" % size)
    if cats:
        check_split(analyze, chrome, cats, work)
    # gmem-synth: about 3.4 records per allocation in its default model
    big = os.path.join(work, "synth.zst")
    run([synth, "--events", str(int(allocs * 3.4)), "-q", "-o", big])
    lane, size = check(analyze, chrome, big, work, "synth")
    if lane["all"] < allocs * 0.9:
        fail("synth: %d allocations, wanted about %d" % (lane["all"], allocs))
    if allocs >= 1000000 and size > 10 * 1000 * 1000:
        fail("synth: the page is %.1f MB, over 10 MB" % (size / 1e6))
    print("timeline browser ok")


if __name__ == "__main__":
    main()
