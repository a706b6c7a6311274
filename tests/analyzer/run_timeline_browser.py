#!/usr/bin/env python3
"""run_timeline_browser.py ANALYZE SYNTH TRACE WORKDIR [ALLOCS]

Opens the --timeline page of TRACE (a recorded sample) and of a gmem-synth
trace of about ALLOCS allocations (default 1e6) in headless Chromium
(--dump-dom of page.html#selftest: the page's hook writes its results into
<pre id="gmem-test">) and checks:
  - no JavaScript error (the page's error handler, and Chromium's console log);
  - the page's band counts equal the ones gmem-analyze printed for the file;
  - the legend's bytes at the peak, as the page sums them from its bands, equal
    the analyzer's (embedded) and the report's live-at-peak by kernel
    (gmem-analyze --format json), and all owners together equal the peak;
  - a wheel zoom driven by the hook narrows the view; a hover over the largest
    band at the peak shows that band's tooltip text;
  - the 1e6 page is at most 10 MB.
Prints the page size and the time from navigation to first paint.
Exit 77 (CTest: skipped) when Chromium is not installed.
"""
import html
import json
import os
import re
import shutil
import subprocess
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


def open_page(chrome, page, work):
    t = time.time()
    p = subprocess.run([chrome] + CHROME_ARGS + ["--user-data-dir=" + os.path.join(work, "chrome-profile"),
                       "--dump-dom", "file://" + os.path.abspath(page) + "#selftest"],
                       capture_output=True, text=True, timeout=300)
    wall = time.time() - t
    m = re.search(r'<pre id="gmem-test"[^>]*>(.*?)</pre>', p.stdout, re.S)
    if not m or not m.group(1).strip():
        fail("%s: the page wrote no test results (chromium rc %d): %s" % (page, p.returncode, p.stderr[-2000:]))
    # Chromium's log carries console messages: an uncaught error is one
    console = [l for l in p.stderr.splitlines() if "CONSOLE" in l and ("Uncaught" in l or "Error" in l)]
    return json.loads(html.unescape(m.group(1))), console, wall


def check(analyze, chrome, trace, work, name):
    page = os.path.join(work, name + ".html")
    line = run([analyze, trace, "--timeline", page]).stdout.strip()
    m = re.fullmatch(r"gmem-analyze: wrote (.*) \(memory timeline: (\d+) lanes?, (\d+) bands drawn, (\d+) small "
                     r"allocations merged, colours by kernel\)", line)
    if not m or m.group(1) != page:
        fail("%s: gmem-analyze printed %r, not one line for the file" % (name, line))
    drawn, merged = int(m.group(3)), int(m.group(4))
    rep = json.loads(run([analyze, trace, "--format", "json", "--top", "0"]).stdout)
    res, console, wall = open_page(chrome, page, work)
    if res["errors"] or console:
        fail("%s: JavaScript errors: %s %s" % (name, res["errors"], console))
    lane = res["lanes"][0]
    if (lane["bands"], lane["merged"]) != (drawn, merged):
        fail("%s: page draws %d bands and merged %d; gmem-analyze said %d and %d" %
             (name, lane["bands"], lane["merged"], drawn, merged))
    if lane["bands"] + lane["merged"] != lane["all"]:
        fail("%s: %d drawn + %d merged != %d allocations" % (name, lane["bands"], lane["merged"], lane["all"]))
    pk = rep["live_at_peak"][0]
    if lane["peak"] != pk["peak_bytes"] or lane["peak_sum"] != pk["bytes"]:
        fail("%s: page peak %s, bands live at it %s; report %d and %d" %
             (name, lane["peak"], lane["peak_sum"], pk["peak_bytes"], pk["bytes"]))
    legend = res["legend"]
    if not legend:
        fail(name + ": empty legend")
    for e in legend:
        if e["bytes"] != e["page_bytes"]:
            fail("%s: legend %r: analyzer %d bytes at the peak, page %d" % (name, e["name"], e["bytes"], e["page_bytes"]))
    groups = [g["bytes"] for g in pk["by_kernel"]]
    if pk.get("baseline_bytes") and not any(g["name"] == "(baseline)" for g in pk["by_kernel"]):
        groups.append(pk["baseline_bytes"])
    want = sorted(groups, reverse=True)[:len(legend)]
    got = sorted((e["bytes"] for e in legend), reverse=True)
    if got != want:
        fail("%s: legend bytes %s; the report's live at the peak by kernel %s" % (name, got, want))
    st = res.get("selftest") or {}
    if not st.get("zoomed"):
        fail("%s: the driven wheel zoom did not narrow the view: %s" % (name, st))
    tip = st.get("tip", "")
    if not tip or tip != st.get("expect") or not tip.startswith("size ") or "owner (kernel): " not in tip:
        fail("%s: hover tooltip %r, expected %r" % (name, tip, st.get("expect")))
    size = os.path.getsize(page)
    print("%s: %d allocations, %d bands drawn, %d merged; page %.2f MB; first paint %.0f ms after navigation "
          "(chromium --dump-dom %.1f s); legend top %s %d bytes; tooltip: %s" %
          (name, lane["all"], drawn, merged, size / 1e6, res["first_paint_ms"], wall, legend[0]["name"],
           legend[0]["bytes"], tip.splitlines()[0]))
    return lane, size


def main():
    if len(sys.argv) < 5:
        fail(__doc__)
    analyze, synth, trace, work = sys.argv[1:5]
    allocs = int(float(sys.argv[5])) if len(sys.argv) > 5 else 1000000
    chrome = chromium()
    if not chrome:
        print("SKIP: chromium not found: install Debian's chromium package (scripts/setup-deps.sh does) "
              "or set CHROMIUM to the browser", file=sys.stderr)
        sys.exit(77)
    os.makedirs(work, exist_ok=True)
    check(analyze, chrome, trace, work, "sample")
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
