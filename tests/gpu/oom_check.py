"""Checks a flight recorder's dump (gmt-dump's text) against what the
program saw: tests/gpu/gpu_test.sh oom_cuda and torch_oom.

  oom_check.py DUMP_TXT cuda EXPECT_JSON     (samples/oom.c's --json)
  oom_check.py DUMP_TXT torch ERROR_JSON     (tests/gpu/torch_oom.py's --error)

One "ok ..." line per check on stdout, exit 1 on the first failure.
"""
import json
import re
import sys

UNITS = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def records(path, kind):
    out = []
    with open(path) as f:
        for line in f:
            words = line.split()
            if words and words[0] == kind:
                out.append(dict(w.split("=", 1) for w in words[1:] if "=" in w))
    return out


def strings(path):
    s = {}
    with open(path) as f:
        for line in f:
            m = re.match(r'string\s+id=(\d+) "(.*)"$', line.rstrip("\n"))
            if m:
                s[int(m.group(1))] = m.group(2)
    return s


def torch_size(text, what):
    """A size as PyTorch's format_size prints it, and the half of its last digit."""
    m = re.search(what + r" ([0-9.]+) (bytes|KiB|MiB|GiB|TiB)", text)
    if not m:
        fail("PyTorch's message has no '%s': %s" % (what, text[:300]))
    v, u = float(m.group(1)), UNITS[m.group(2)]
    return v * u, 0.005 * u + 1


def main():
    dump, mode, exp_path = sys.argv[1], sys.argv[2], sys.argv[3]
    ooms = records(dump, "oom")
    if len(ooms) != 1:
        fail("%d OOM records in the dump, want 1" % len(ooms))
    o = {k: v for k, v in ooms[0].items()}
    num = lambda k: int(o[k], 0)
    live = records(dump, "live")
    names = strings(dump)
    exp = json.load(open(exp_path))
    if mode == "cuda":
        if o["cause"] != "cuda":
            fail("cause %s, want cuda" % o["cause"])
        if num("bytes") != exp["oom_bytes"]:
            fail("request %d bytes, the program asked %d" % (num("bytes"), exp["oom_bytes"]))
        print("ok the dump's request is the program's: %d bytes" % num("bytes"))
        if num("step") != exp["oom_step"]:
            fail("step %d, the program failed in step %d" % (num("step"), exp["oom_step"]))
        print("ok the failure's step: %d" % num("step"))
        mine = [l for l in live if l.get("source") == "malloc"]
        if len(mine) < exp["live_count"] or sum(int(l["bytes"]) for l in mine) < exp["live_bytes"]:
            fail("LIVE: %d cudaMalloc allocations, %d bytes; the program held %d, %d bytes"
                 % (len(mine), sum(int(l["bytes"]) for l in mine), exp["live_count"], exp["live_bytes"]))
        print("ok the live set holds the program's %d allocations (%d bytes)" % (exp["live_count"], exp["live_bytes"]))
        if not names.get(num("api"), "").startswith("cuMemAlloc"):
            fail("failed call %r" % names.get(num("api")))
        if num("free") > exp["oom_bytes"]:
            fail("the driver had %d bytes free, more than the request" % num("free"))
        print("ok %s failed with %d bytes free" % (names.get(num("api")), num("free")))
        return
    if not exp.get("message"):
        fail("the program did not run out of memory: %s" % exp)
    msg = exp["message"]
    if o["cause"] != "framework":
        fail("cause %s, want framework (the PyTorch bridge)" % o["cause"])
    want, tol = torch_size(msg, "Tried to allocate")
    if abs(num("bytes") - want) > tol:
        fail("request %d bytes; PyTorch says: Tried to allocate %s" % (num("bytes"), msg[:200]))
    print("ok the request matches PyTorch's message: %d bytes" % num("bytes"))
    free, ftol = torch_size(msg, "of which")
    if abs(num("free") - free) > ftol:
        fail("free %d bytes; PyTorch says: %s" % (num("free"), msg[:300]))
    print("ok the free memory matches PyTorch's message: %d bytes" % num("free"))
    op = names.get(num("op"), "")
    if not op:
        fail("the dump names no op (range %s)" % o.get("range"))
    print("ok the op that failed: %s" % op)


if __name__ == "__main__":
    main()
